package config

import (
	"strings"
	"testing"
)

func TestControlSection(t *testing.T) {
	const base = "source:\n  type: synthetic\n  sample_rate: 48000\n  signal: tone\n  frequency_hz: 1000\nfilter: {taps: [1]}\nsink: {type: null}\n"
	tests := []struct {
		name string
		yaml string
		line int
		want string // "" = valid
	}{
		{"loopback", base + "control: {listen: \"127.0.0.1:8080\", watch_config: true}\n", 0, ""},
		{"localhost", base + "control: {listen: \"localhost:0\"}\n", 0, ""},
		{"ipv6 loopback", base + "control: {listen: \"[::1]:8080\"}\n", 0, ""},
		{"remote allowed", base + "control:\n  listen: \"0.0.0.0:8080\"\n  allow_remote: true\n", 0, ""},
		{"remote refused", base + "control:\n  listen: \"0.0.0.0:8080\"\n", 9, "control.listen: \"0.0.0.0:8080\" is reachable from other machines"},
		{"all interfaces refused", base + "control:\n  listen: \":8080\"\n", 9, "set control.allow_remote: true"},
		{"no port", base + "control: {listen: localhost}\n", 8, "control.listen: want host:port"},
		{"bad port", base + "control: {listen: \"127.0.0.1:70000\"}\n", 8, "control.listen: port must be a number in 0..65535"},
		{"empty listen", base + "control: {listen: \"\"}\n", 8, "control.listen: must not be empty"},
		{"allow_remote alone", base + "control: {allow_remote: true}\n", 8, "control.allow_remote: needs control.listen"},
		{"unknown key", base + "control: {listen: \"127.0.0.1:1\", port: 3}\n", 8, "port"},
		{"wrong type", base + "control: {watch_config: yes please}\n", 8, "watch_config"},
		{"token with remote", base + "control: {listen: \"0.0.0.0:8080\", allow_remote: true, token: abcdefghijklmnop0123}\n", 0, ""},
		{"token without remote", base + "control: {listen: \"127.0.0.1:8080\", token: abcdefghijklmnop0123}\n", 8, "control.token: only used with control.allow_remote: true"},
		{"short token", base + "control: {listen: \"0.0.0.0:8080\", allow_remote: true, token: abc}\n", 8, "control.token: must be at least 16 characters"},
		{"empty token", base + "control: {listen: \"0.0.0.0:8080\", allow_remote: true, token: \"\"}\n", 8, "control.token: must be at least 16"},
		{"token with a space", base + "control: {listen: \"0.0.0.0:8080\", allow_remote: true, token: \"abcdefgh ijklmnop\"}\n", 8, "control.token: may hold only"},
		{"allowed hosts", base + "control: {listen: \"127.0.0.1:8080\", allowed_hosts: [sdr.local, box-1.example.org]}\n", 0, ""},
		{"allowed host with port", base + "control: {listen: \"127.0.0.1:8080\", allowed_hosts: [\"sdr.local:8080\"]}\n", 8, "control.allowed_hosts[0]: \"sdr.local:8080\" is not a host name"},
		{"allowed host with scheme", base + "control: {listen: \"127.0.0.1:8080\", allowed_hosts: [ok.local, \"http://x\"]}\n", 8, "control.allowed_hosts[1]: \"http://x\" is not a host name"},
		{"allowed host ip", base + "control: {listen: \"127.0.0.1:8080\", allowed_hosts: [\"10.0.0.1\"]}\n", 8, "is an IP literal"},
		{"allowed host localhost", base + "control: {listen: \"127.0.0.1:8080\", allowed_hosts: [localhost]}\n", 8, "localhost is always allowed"},
		{"allowed host empty", base + "control: {listen: \"127.0.0.1:8080\", allowed_hosts: [\"\"]}\n", 8, "control.allowed_hosts[0]: must not be empty"},
		{"allowed hosts alone", base + "control: {allowed_hosts: [sdr.local]}\n", 8, "control.allowed_hosts: needs control.listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml), "x.yaml")
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Control.Listen == "" {
					t.Error("listen not parsed")
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if want := "x.yaml:" + itoa(tt.line) + ":"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %q, want %q at %s", err, tt.want, want)
			}
		})
	}
}
