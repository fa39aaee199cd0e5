// metadata_test.go: unit tests for the guest player's metadata decoding (metadata.go) and YAML subset (yaml.go).
// Run by meson (suite unit) as: go test metadata.go yaml.go metadata_test.go
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func gzb64(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

const v2yaml = `---
# written by the operator
instance-id: "default/vm-a"
local-hostname: vm-a   # trailing comment
wait-on-network:
  ipv4: true
network:
  version: 2
  ethernets:
    eth1:
      addresses: [10.0.1.5/24]
    eth0:
      match:
        macaddress: "00:50:56:aa:bb:cc"
      set-name: eth0
      dhcp4: false
      addresses:
      - "10.0.0.5/16"
      - fd00::5/64
      gateway4: 10.0.0.1
      nameservers:
        addresses: ['8.8.8.8', "1.1.1.1"]
`

func TestMetadata(t *testing.T) {
	cases := []struct {
		name, data, enc, mac string
		want                 guestNet
		wantErr              bool
	}{
		{"yaml v2 plain, mac match", v2yaml, "", "00:50:56:AA:BB:CC", guestNet{"10.0.0.5", 16, "vm-a"}, false},
		{"yaml v2 base64, no mac: first by name", v2yaml, "base64", "", guestNet{"10.0.0.5", 16, "vm-a"}, false},
		{"yaml v2, other mac picks that nic", strings.Replace(v2yaml, "eth1:\n", "eth1:\n      match: {macaddress: '00:50:56:00:00:09'}\n", 1),
			"gzip+base64", "00:50:56:00:00:09", guestNet{"10.0.1.5", 24, "vm-a"}, false},
		{"json v2", `{"local-hostname":"j","network":{"version":2,"ethernets":{"eth0":{"addresses":["192.168.7.8/24"]}}}}`,
			"b64", "", guestNet{"192.168.7.8", 24, "j"}, false},
		{"json v1 netmask", `{"hostname":"h1","network":{"version":1,"config":[{"type":"nameserver"},{"type":"physical","name":"eth0","subnets":[{"type":"static","address":"10.9.8.7","netmask":"255.255.0.0"}]}]}}`,
			"gz+b64", "", guestNet{"10.9.8.7", 16, "h1"}, false},
		{"dhcp: no static address", "local-hostname: d\nnetwork:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n",
			"", "", guestNet{"", 0, "d"}, false},
		{"no network", "instance-id: x\n", "", "", guestNet{}, false},
		{"encoded network", "local-hostname: e\nnetwork: " + b64("version: 2\nethernets:\n  eth0:\n    addresses:\n    - 172.16.0.9/12\n") + "\nnetwork.encoding: base64\n",
			"", "", guestNet{"172.16.0.9", 12, "e"}, false},
		{"network-config wrapper", "network:\n  network:\n    version: 2\n    ethernets:\n      eth0: {addresses: [10.1.1.1/8]}\n",
			"", "", guestNet{"10.1.1.1", 8, ""}, false},
		{"bad base64", "!!!", "base64", "", guestNet{}, true},
		{"bad encoding", "x: y", "rot13", "", guestNet{}, true},
		{"not a map", "- a\n- b\n", "", "", guestNet{}, true},
		{"bad yaml", "a: b\n   c: d\n", "", "", guestNet{}, true},
	}
	for _, c := range cases {
		data := c.data
		switch c.enc {
		case "base64", "b64":
			if !c.wantErr {
				data = b64(data)
			}
		case "gzip+base64", "gz+b64":
			data = gzb64(data)
		}
		got, err := parseGuestMetadata(data, c.enc, c.mac)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err = %v, wantErr %v", c.name, err, c.wantErr)
			continue
		}
		if !c.wantErr && got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestYAMLShapes(t *testing.T) {
	doc := "a: 1\nb:\n- x\n- k: v\n  k2: 'it''s'\n- - n1\n  - n2\nc: |\n  line1\n   line2\nd: {e: [1, \"2, 3\"], f: g}\ne: \"q\\\"x\"\n"
	got, err := parseYAML(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{
		"a": "1",
		"b": []interface{}{"x", map[string]interface{}{"k": "v", "k2": "it's"}, []interface{}{"n1", "n2"}},
		"c": "line1\n line2\n",
		"d": map[string]interface{}{"e": []interface{}{"1", "2, 3"}, "f": "g"},
		"e": "q\"x",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}
