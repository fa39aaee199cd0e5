// metadata.go: decodes a VM's cloud-init guestinfo metadata the way the VMware datasource would, far enough
// to find the hostname and the static IPv4 address of the first interface.
//
// Accepted: guestinfo.metadata as plain text, "base64" (alias "b64") or "gzip+base64" (alias "gz+b64"), per
// guestinfo.metadata.encoding; the document is JSON (starts with '{' or '[') or YAML (gopkg.in/yaml.v3). Keys used:
// local-hostname (or hostname), network (a map, or an encoded string with network.encoding), holding netplan
// version 2 (ethernets.<name>.addresses, match.macaddress) or version 1 (config[type=physical].subnets[type=static]).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

const maxMetadataSize = 1 << 20

// guestNet is what the guest player publishes for a VM.
type guestNet struct {
	IP       string // "" when the metadata asks for no static address
	Prefix   int
	Hostname string
}

func decodeEncoded(data, encoding string) ([]byte, error) {
	enc := strings.ToLower(strings.TrimSpace(encoding))
	switch enc {
	case "", "none", "plain":
		return []byte(data), nil
	case "base64", "b64", "gzip+base64", "gz+b64":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, fmt.Errorf("base64: %w", err)
		}
		if enc == "base64" || enc == "b64" {
			return raw, nil
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		out, err := io.ReadAll(io.LimitReader(zr, maxMetadataSize+1))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if len(out) > maxMetadataSize {
			return nil, fmt.Errorf("metadata over %d bytes", maxMetadataSize)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown encoding %q", encoding)
	}
}

// parseDocument reads JSON or YAML into the shapes encoding/json gives an interface{}.
func parseDocument(b []byte) (interface{}, error) {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var v interface{}
		if err := json.Unmarshal(t, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return parseYAML(string(b))
}

// parseYAML decodes the first YAML document of doc (gopkg.in/yaml.v3) into the shapes encoding/json gives
// an interface{}, so the lookups below read both formats alike: map[string]interface{}, []interface{},
// string, float64, bool and nil. An empty document (or one of only comments) is an empty map.
func parseYAML(doc string) (interface{}, error) {
	var v interface{}
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		return nil, yamlErr(err)
	}
	if v == nil {
		return map[string]interface{}{}, nil
	}
	return jsonShape(v), nil
}

var (
	yamlQuoted = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")
	yamlAnchor = regexp.MustCompile(`anchor '[^']*'`)
)

// yamlErr keeps yaml.v3's line numbers and reasons but not the document's text, which its decoding errors
// quote (a duplicate key, an anchor's name, an invalid key, a value that does not fit its tag) and guest.go
// logs: the guest player's errors never quote the metadata. libyaml's syntax errors are fixed texts (no " or `).
func yamlErr(err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	switch {
	case errors.As(err, &te):
		msg = yamlQuoted.ReplaceAllString("yaml: "+strings.Join(te.Errors, "; "), "...")
	case strings.HasPrefix(msg, "yaml: invalid map key"):
		msg = "yaml: invalid map key"
	default: // "unknown anchor 'x' referenced", "cannot decode !!str `x` as a !!int"
		msg = yamlQuoted.ReplaceAllString(yamlAnchor.ReplaceAllString(msg, "anchor ..."), "...")
	}
	return errors.New(msg)
}

// jsonShape converts yaml.v3's values: map[interface{}]interface{} (a mapping with a key that is not a
// string, e.g. "1: x") becomes map[string]interface{} with the key formatted by fmt.Sprint, integers
// become float64, a timestamp (yaml.v3 resolves a plain 2001-12-14 to time.Time) becomes its RFC 3339 text.
func jsonShape(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		for k, e := range x {
			x[k] = jsonShape(e)
		}
		return x
	case map[interface{}]interface{}:
		m := make(map[string]interface{}, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonShape(e)
		}
		return m
	case []interface{}:
		for i, e := range x {
			x[i] = jsonShape(e)
		}
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return v
}

func asString(v interface{}) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func asMap(v interface{}) map[string]interface{} {
	m, _ := v.(map[string]interface{})
	return m
}

func asList(v interface{}) []interface{} {
	switch x := v.(type) {
	case []interface{}:
		return x
	case string: // a single address written as a scalar
		if x != "" {
			return []interface{}{x}
		}
	}
	return nil
}

// parseIPv4 accepts "a.b.c.d" or "a.b.c.d/nn"; netmask may give the prefix for the bare form.
func parseIPv4(addr, netmask string) (string, int, bool) {
	addr = strings.TrimSpace(addr)
	if ip, n, err := net.ParseCIDR(addr); err == nil {
		if ip.To4() == nil {
			return "", 0, false
		}
		ones, _ := n.Mask.Size()
		return ip.To4().String(), ones, true
	}
	ip := net.ParseIP(addr)
	if ip == nil || ip.To4() == nil {
		return "", 0, false
	}
	prefix := 24
	if m := net.ParseIP(strings.TrimSpace(netmask)); m != nil && m.To4() != nil {
		ones, bits := net.IPMask(m.To4()).Size()
		if bits == 32 {
			prefix = ones
		}
	}
	return ip.To4().String(), prefix, true
}

// staticFromV2 looks at netplan v2 ethernets: the one matching mac, else the first by name.
func staticFromV2(n map[string]interface{}, mac string) (string, int) {
	eths := asMap(n["ethernets"])
	if eths == nil {
		return "", 0
	}
	names := make([]string, 0, len(eths))
	for k := range eths {
		names = append(names, k)
	}
	sort.Strings(names)
	pick := ""
	for _, k := range names {
		m := asMap(asMap(eths[k])["match"])
		if mac != "" && strings.EqualFold(asString(m["macaddress"]), mac) {
			pick = k
			break
		}
	}
	if pick == "" && len(names) > 0 {
		pick = names[0]
	}
	eth := asMap(eths[pick])
	for _, a := range asList(eth["addresses"]) {
		if ip, prefix, ok := parseIPv4(asString(a), ""); ok {
			return ip, prefix
		}
	}
	return "", 0
}

// staticFromV1 looks at the first physical interface of a cloud-init v1 config.
func staticFromV1(n map[string]interface{}) (string, int) {
	for _, c := range asList(n["config"]) {
		cm := asMap(c)
		if asString(cm["type"]) != "physical" {
			continue
		}
		for _, s := range asList(cm["subnets"]) {
			sm := asMap(s)
			t := asString(sm["type"])
			if t != "static" && t != "static4" {
				continue
			}
			if ip, prefix, ok := parseIPv4(asString(sm["address"]), asString(sm["netmask"])); ok {
				return ip, prefix
			}
		}
		return "", 0 // only the first physical interface counts
	}
	return "", 0
}

// parseGuestMetadata decodes guestinfo.metadata; mac is the first NIC's MAC (for netplan match).
func parseGuestMetadata(data, encoding, mac string) (guestNet, error) {
	var g guestNet
	if len(data) > 2*maxMetadataSize {
		return g, fmt.Errorf("metadata over %d bytes", 2*maxMetadataSize)
	}
	raw, err := decodeEncoded(data, encoding)
	if err != nil {
		return g, err
	}
	doc, err := parseDocument(raw)
	if err != nil {
		return g, err
	}
	md := asMap(doc)
	if md == nil {
		return g, fmt.Errorf("metadata is not a map")
	}
	g.Hostname = asString(md["local-hostname"])
	if g.Hostname == "" {
		g.Hostname = asString(md["hostname"])
	}

	netv := md["network"]
	if s, ok := netv.(string); ok {
		nraw, err := decodeEncoded(s, asString(md["network.encoding"]))
		if err != nil {
			return g, fmt.Errorf("network: %w", err)
		}
		if netv, err = parseDocument(nraw); err != nil {
			return g, fmt.Errorf("network: %w", err)
		}
	}
	n := asMap(netv)
	if inner := asMap(n["network"]); inner != nil && n["version"] == nil {
		n = inner // a network-config file: {network: {version: 2, ...}}
	}
	if n == nil {
		return g, nil
	}
	switch asString(n["version"]) {
	case "1":
		g.IP, g.Prefix = staticFromV1(n)
	default:
		g.IP, g.Prefix = staticFromV2(n, mac)
	}
	return g, nil
}
