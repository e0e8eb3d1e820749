package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServePprof checks that -pprof serves the profile index on a loopback
// address and refuses any other address.
func TestServePprof(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "127.0.0.1"} {
		if ln, err := servePprof(addr); err == nil {
			ln.Close()
			t.Errorf("servePprof(%q) accepted a non-loopback address", addr)
		}
	}
	ln, err := servePprof("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	resp, err := http.Get("http://" + ln.Addr().String() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Fatalf("index: %d %.200s", resp.StatusCode, body)
	}
}
