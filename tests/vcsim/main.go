// main.go: vcsim-launcher, the govmomi vCenter simulator (govmomi as pinned in go.mod) as a test fixture for vmop.
//
// Owns: flag parsing, building the VPX model, serving it on loopback (plain or TLS), printing the one JSON
// line that tells the test harness where everything is, and cleaning up (model.Remove) on SIGTERM/SIGINT or
// when the parent process goes away. Not here: content library seeding (seed.go), the guest player
// (guest.go, metadata.go). See README.md for the flags and the JSON line. Test-only code: never shipped.
package main

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	_ "github.com/vmware/govmomi/pbm/simulator"  // registers the /pbm endpoint (storage policies, SPBM)
	_ "github.com/vmware/govmomi/vapi/simulator" // registers the /rest endpoints (content library, vm-template)
)

// defaultOVF is set at build time (-ldflags "-X main.defaultOVF=<source>/testdata/ovf/vmop-tiny.ovf").
var defaultOVF = ""

type itemInfo struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type libraryInfo struct {
	ID    string     `json:"id"`
	Name  string     `json:"name"`
	Items []itemInfo `json:"items"`
}

// readyLine is the one JSON line printed on stdout once the simulator serves and is seeded.
type readyLine struct {
	URL              string            `json:"url"`
	SDK              string            `json:"sdk"`
	Username         string            `json:"username"`
	Password         string            `json:"password"`
	TLS              bool              `json:"tls"`
	ThumbprintSHA1   string            `json:"thumbprint_sha1"`
	ThumbprintSHA256 string            `json:"thumbprint_sha256"`
	Datacenter       string            `json:"datacenter"`
	Cluster          string            `json:"cluster"`
	ResourcePool     string            `json:"resource_pool"`
	Folder           string            `json:"folder"`
	Datastore        string            `json:"datastore"`
	Network          string            `json:"network"`
	Portgroups       []string          `json:"portgroups"`
	DVS              string            `json:"dvs"`
	DVSUUID          string            `json:"dvs_uuid"`
	Hosts            []string          `json:"hosts"`
	Datastores       []string          `json:"datastores"`
	DatastoreDirs    []string          `json:"datastore_dirs"`
	TemplateVM       string            `json:"template_vm"`
	Libraries        []libraryInfo     `json:"libraries"`
	Morefs           map[string]string `json:"morefs"`
	PortgroupKeys    []string          `json:"portgroup_keys"`
	PID              int               `json:"pid"`
}

var (
	model     *simulator.Model
	cleanOnce sync.Once
)

// shutdown removes the temporary datastore directories and exits; safe to call from any goroutine.
func shutdown(code int) {
	cleanOnce.Do(func() {
		if model != nil {
			model.Remove()
		}
		os.Exit(code)
	})
	select {} // another goroutine is exiting
}

func fatalf(format string, args ...interface{}) {
	log.Printf("vcsim-launcher: "+format, args...)
	shutdown(1)
}

// parseMethodDelays reads "Method=ms,Method2=ms".
func parseMethodDelays(s string) (map[string]int, error) {
	m := map[string]int{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		parts := strings.SplitN(strings.TrimSpace(kv), "=", 2)
		if len(parts) != 2 || parts[0] == "" {
			return nil, fmt.Errorf("bad -method-delay entry %q (want Method=ms)", kv)
		}
		ms, err := strconv.Atoi(parts[1])
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("bad delay in -method-delay entry %q", kv)
		}
		m[parts[0]] = ms
	}
	return m, nil
}

// onOff is a boolean flag that also accepts on/off and yes/no (-tls, -tls=on, -tls=false).
type onOff bool

func (b *onOff) String() string   { return strconv.FormatBool(bool(*b)) }
func (b *onOff) IsBoolFlag() bool { return true }
func (b *onOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "yes":
		*b = true
	case "off", "no":
		*b = false
	default:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want on/off or true/false, got %q", s)
		}
		*b = onOff(v)
	}
	return nil
}

func boolFlag(name string, def bool, usage string) *onOff {
	v := onOff(def)
	flag.Var(&v, name, usage)
	return &v
}

func colonHex(b []byte) string {
	s := make([]string, len(b))
	for i, c := range b {
		s[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(s, ":")
}

// inventoryPath builds "/DC0/host/DC0_C0/Resources" by walking parents up to the root folder.
func inventoryPath(ref types.ManagedObjectReference) string {
	var parts []string
	for i := 0; i < 64; i++ {
		obj := model.Map().Get(ref)
		e, ok := obj.(mo.Entity)
		if !ok {
			break
		}
		me := e.Entity()
		if me.Parent == nil {
			break
		}
		parts = append([]string{me.Name}, parts...)
		ref = *me.Parent
	}
	return "/" + strings.Join(parts, "/")
}

// sortedEntities returns all entities of a kind in creation order (shorter names first, then by name,
// so DC0_DVPG2 comes before DC0_DVPG10).
func sortedEntities(kind string) []mo.Entity {
	all := model.Map().All(kind)
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].Entity().Name, all[j].Entity().Name
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	return all
}

// describeInventory fills the inventory part of the ready line from the registry.
func describeInventory(r *readyLine) {
	r.Morefs = map[string]string{}
	r.Portgroups = []string{}
	r.PortgroupKeys = []string{}
	r.Hosts = []string{}
	r.Datastores = []string{}
	r.DatastoreDirs = []string{}

	dcs := sortedEntities("Datacenter")
	if len(dcs) == 0 {
		return
	}
	dc := dcs[0].(*simulator.Datacenter)
	r.Datacenter = inventoryPath(dc.Self)
	r.Morefs["datacenter"] = dc.Self.Value
	r.Folder = inventoryPath(dc.VmFolder)
	r.Morefs["folder"] = dc.VmFolder.Value

	if cl := sortedEntities("ClusterComputeResource"); len(cl) > 0 {
		c := cl[0].(*simulator.ClusterComputeResource)
		r.Cluster = inventoryPath(c.Self)
		r.Morefs["cluster"] = c.Self.Value
		if c.ResourcePool != nil {
			r.ResourcePool = inventoryPath(*c.ResourcePool)
			r.Morefs["resource_pool"] = c.ResourcePool.Value
		}
	} else if cr := sortedEntities("ComputeResource"); len(cr) > 0 {
		c := cr[0].(*mo.ComputeResource)
		if c.ResourcePool != nil {
			r.ResourcePool = inventoryPath(*c.ResourcePool)
			r.Morefs["resource_pool"] = c.ResourcePool.Value
		}
	}

	for _, e := range sortedEntities("HostSystem") {
		r.Hosts = append(r.Hosts, inventoryPath(e.Entity().Self))
	}
	for i, e := range sortedEntities("Datastore") {
		ds := e.(*simulator.Datastore)
		r.Datastores = append(r.Datastores, inventoryPath(ds.Self))
		if info := ds.Info.GetDatastoreInfo(); info != nil {
			r.DatastoreDirs = append(r.DatastoreDirs, strings.TrimPrefix(info.Url, "file://"))
		}
		if i == 0 {
			r.Datastore = inventoryPath(ds.Self)
			r.Morefs["datastore"] = ds.Self.Value
		}
	}
	for _, e := range sortedEntities("Network") {
		if _, ok := e.(*mo.Network); ok {
			r.Network = inventoryPath(e.Entity().Self)
			r.Morefs["network"] = e.Entity().Self.Value
			break
		}
	}
	for _, e := range sortedEntities("DistributedVirtualSwitch") {
		dvs := e.(*simulator.DistributedVirtualSwitch)
		r.DVS = inventoryPath(dvs.Self)
		r.Morefs["dvs"] = dvs.Self.Value
		if cfg := dvs.Config; cfg != nil {
			r.DVSUUID = cfg.GetDVSConfigInfo().Uuid
		}
		break
	}
	for _, e := range sortedEntities("DistributedVirtualPortgroup") {
		pg := e.(*simulator.DistributedVirtualPortgroup)
		if strings.Contains(pg.Name, "-DVUplinks-") {
			continue
		}
		r.Portgroups = append(r.Portgroups, inventoryPath(pg.Self))
		r.PortgroupKeys = append(r.PortgroupKeys, pg.Key)
	}
}

// watchParent exits (with cleanup) once the process that started us is gone.
func watchParent() {
	ppid := os.Getppid()
	if ppid <= 1 {
		return
	}
	// Also ask the kernel; the poll below covers the window before this call and any thread subtlety.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	go func() {
		for range time.Tick(200 * time.Millisecond) {
			if os.Getppid() != ppid {
				log.Printf("vcsim-launcher: parent %d is gone, exiting", ppid)
				shutdown(0)
			}
		}
	}()
}

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)

	listen := flag.String("listen", "127.0.0.1:0", "address to serve on (port 0 picks a free port)")
	username := flag.String("username", "user", "the only user name SOAP Login accepts")
	password := flag.String("password", "pass", "the only password SOAP Login accepts")
	useTLS := boolFlag("tls", false, "serve https with the httptest certificate (-tls, -tls=on|off)")
	idle := flag.Duration("session-idle-timeout", 0, "expire idle SOAP and REST sessions after this long (0 = never)")
	methodDelay := flag.String("method-delay", "", "per-method SOAP delays: Method=ms,Method2=ms")
	taskDelay := flag.String("task-delay", "", "per-task delays before the simulator runs a task, by task name: ShutdownGuest=600000 plays a guest that does not shut down")
	delay := flag.Int("delay", 0, "delay every SOAP call by this many ms")
	jitter := flag.Float64("delay-jitter", 0, "delay jitter as coefficient of variation")
	clusters := flag.Int("clusters", 1, "clusters per datacenter")
	hosts := flag.Int("hosts", 3, "hosts per cluster")
	standalone := flag.Int("standalone-hosts", 1, "standalone hosts per datacenter")
	pools := flag.Int("pools", 0, "child resource pools per cluster")
	portgroups := flag.Int("portgroups", 1, "DV port groups per datacenter (0: no DVS, NICs use VM Network)")
	vms := flag.Int("vms", 2, "VMs per resource pool and per standalone host")
	datastores := flag.Int("datastores", 1, "datastores (each a temp dir)")
	autostart := boolFlag("autostart", true, "power on the generated VMs")
	guestIP := boolFlag("guest-ip", true, "play the guest: publish an IP for powered-on VMs")
	seed := boolFlag("seed", true, "seed the content libraries")
	extraLibs := flag.Int("extra-libraries", 0, "also seed this many libraries vmop-extra-NN, one OVF item each")
	ovfPath := flag.String("ovf", defaultOVF, "OVF descriptor to seed the libraries with")
	traceFile := flag.String("trace-calls", "", "append one line per SOAP request (method, object, property paths; no bodies) to this file")
	dieWithParent := flag.Bool("die-with-parent", true, "exit when the process that started us exits (false for long-lived environments such as tests/devenv)")
	flag.Parse()

	if flag.NArg() != 0 {
		fatalf("unexpected arguments: %v", flag.Args())
	}
	taskDelays, err := parseMethodDelays(*taskDelay)
	if err != nil {
		fatalf("-task-delay: %v", err)
	}
	delays, err := parseMethodDelays(*methodDelay)
	if err != nil {
		fatalf("%v", err)
	}
	if *username == "" || *password == "" {
		fatalf("-username and -password must not be empty")
	}

	if *dieWithParent {
		watchParent()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		shutdown(0)
	}()

	m := simulator.VPX()
	m.Cluster = *clusters
	m.ClusterHost = *hosts
	m.Host = *standalone
	m.Pool = *pools
	m.Portgroup = *portgroups
	m.Machine = *vms
	m.Datastore = *datastores
	m.Autostart = bool(*autostart)
	model = m
	if err := m.Create(); err != nil {
		fatalf("model create: %v", err)
	}
	if *idle > 0 {
		// The SOAP and REST session managers read this setting at each login (a Go duration string).
		om := m.Map().OptionManager()
		om.UpdateOptions(&types.UpdateOptions{ChangedValue: []types.BaseOptionValue{
			&types.OptionValue{Key: "config.vmacore.soap.sessionTimeout", Value: idle.String()},
		}})
	}

	m.Service.RegisterEndpoints = true
	m.Service.Listen = &url.URL{Host: *listen, User: url.UserPassword(*username, *password)}
	if *useTLS {
		m.Service.TLS = new(tls.Config)
	}
	s := m.Service.NewServer()

	r := readyLine{
		Username: *username,
		Password: *password,
		TLS:      bool(*useTLS),
		PID:      os.Getpid(),
	}
	base := url.URL{Scheme: s.URL.Scheme, Host: s.URL.Host}
	r.URL = base.String()
	r.SDK = r.URL + s.URL.Path
	if *useTLS {
		der := s.Certificate().Raw
		s1 := sha1.Sum(der)
		s256 := sha256.Sum256(der)
		r.ThumbprintSHA1 = colonHex(s1[:])
		r.ThumbprintSHA256 = colonHex(s256[:])
	}
	describeInventory(&r)

	r.Libraries = []libraryInfo{}
	if *seed && r.Datastore != "" && r.ResourcePool != "" {
		libs, tmpl, err := seedLibraries(s.URL, &r, *ovfPath, *extraLibs)
		if err != nil {
			fatalf("seeding content libraries: %v", err)
		}
		r.Libraries = libs
		if tmpl != nil {
			r.TemplateVM = inventoryPath(*tmpl)
			r.Morefs["template_vm"] = tmpl.Value
		}
	}

	// Delays start only now, so seeding stays fast (the Service holds a pointer to this struct).
	m.DelayConfig.Delay = *delay
	m.DelayConfig.MethodDelay = delays
	m.DelayConfig.DelayJitter = *jitter
	if len(taskDelays) > 0 {
		// the task's object lock is not held while it waits, so the VM stays readable and other
		// tasks on it (a hard power-off) run meanwhile
		taskDelays["LockHandoff"] = 0
		simulator.TaskDelay.MethodDelay = taskDelays
	}

	if *traceFile != "" {
		traceCalls(*traceFile)
	}
	if *guestIP {
		go guestPlayer(m)
	}

	line, err := json.Marshal(&r)
	if err != nil {
		fatalf("json: %v", err)
	}
	if _, err := os.Stdout.Write(append(line, '\n')); err != nil {
		fatalf("writing the ready line: %v", err)
	}
	// Nothing else goes to stdout: point fd 1 at /dev/null so a reader that closed the pipe cannot
	// kill us with SIGPIPE.
	if devnull, err := os.OpenFile("/dev/null", os.O_WRONLY, 0); err == nil {
		_ = syscall.Dup2(int(devnull.Fd()), 1)
		_ = devnull.Close()
	}

	select {}
}
