package tikvkv

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"tikv://pd1:2379", []string{"pd1:2379"}, ""},
		{"tikv://pd1:2379,pd2:2379, pd3:2379", []string{"pd1:2379", "pd2:2379", "pd3:2379"}, ""},
		{"tikv://", nil, "no PD address"},
		{"tikv://pd1", nil, "has no port"},
		{"pd1:2379", nil, "want pebble or tikv://"},
	} {
		got, err := ParseURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

// TestOpenUnreachablePD: with no PD listening, Open fails with an error
// naming the addresses, within client-go's retries.
func TestOpenUnreachablePD(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	s, err := Open([]string{addr}, nil)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded with no PD")
	}
	if !strings.Contains(err.Error(), "cannot reach PD at "+addr) {
		t.Fatalf("error %q does not name the PD", err)
	}
	if d := time.Since(start); d > 2*dialTimeout {
		t.Fatalf("Open took %v to fail", d)
	}
	t.Logf("failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
}
