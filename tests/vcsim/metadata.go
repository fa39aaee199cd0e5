// metadata.go: decodes a VM's cloud-init guestinfo metadata the way the VMware datasource would, far enough
// to find the hostname and the static IPv4 address of the first interface.
//
// Accepted: guestinfo.metadata as plain text, "base64" (alias "b64") or "gzip+base64" (alias "gz+b64"), per
// guestinfo.metadata.encoding; the document is JSON (starts with '{') or a YAML subset (yaml.go). Keys used:
// local-hostname (or hostname), network (a map, or an encoded string with network.encoding), holding netplan
// version 2 (ethernets.<name>.addresses, match.macaddress) or version 1 (config[type=physical].subnets[type=static]).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
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

// parseDocument reads JSON or the YAML subset into maps, slices and scalars.
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
