package tikvkv

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/tikv/client-go/v2/txnkv"
	"go.uber.org/zap/zapcore"
)

// Scheme prefixes the -storage value that selects TiKV.
const Scheme = "tikv://"

// ParseURL returns the PD addresses of a tikv://pd1:2379[,pd2:2379...]
// storage value.
func ParseURL(u string) ([]string, error) {
	rest, ok := strings.CutPrefix(u, Scheme)
	if !ok {
		return nil, fmt.Errorf("storage %q: want pebble or %shost:port[,host:port...]", u, Scheme)
	}
	var addrs []string
	for _, a := range strings.Split(rest, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if !strings.Contains(a, ":") {
			return nil, fmt.Errorf("storage %q: PD address %q has no port", u, a)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("storage %q: no PD address", u)
	}
	return addrs, nil
}

// Open connects to the TiKV cluster whose PD servers are pdAddrs, through
// client-go's transactional client. It fails when no PD answers (after
// a TCP dial of each address bounded by dialTimeout: client-go itself
// retries for more than a minute before it gives up). log receives the
// Store's warnings; nil discards them.
func Open(pdAddrs []string, log *slog.Logger) (*Store, error) {
	quietLogs(zapcore.WarnLevel)
	if err := probe(pdAddrs); err != nil {
		return nil, fmt.Errorf("tikv: cannot reach PD at %s: %w", strings.Join(pdAddrs, ","), err)
	}
	c, err := txnkv.NewClient(pdAddrs)
	if err != nil {
		return nil, fmt.Errorf("tikv: cannot reach PD at %s: %w", strings.Join(pdAddrs, ","), err)
	}
	return newStore(c.KVStore, log), nil
}

// dialTimeout bounds the reachability probe of each PD address.
const dialTimeout = 5 * time.Second

// probe succeeds when one of addrs accepts a TCP connection.
func probe(addrs []string) error {
	var errs []error
	for _, a := range addrs {
		c, err := net.DialTimeout("tcp", a, dialTimeout)
		if err == nil {
			return c.Close()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
