package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"
)

// A -config file is a YAML file in the shape of mongod's configuration
// file (mongod.conf), so that a MongoDB user's file mostly works: each
// option Folio has sets the flag that stands for it; the setParameter
// section sets server parameters; any other option is refused, by name.
// https://www.mongodb.com/docs/v7.0/reference/configuration-options/

// configSetting is one flag a configuration file sets.
type configSetting struct {
	option string // the file's dotted option name, for messages
	flag   string
	value  string
}

// serverConfig is what a configuration file says.
type serverConfig struct {
	settings []configSetting
	// params are the setParameter section's, in the file's order.
	params bson.D
	// zoneInfo is processManagement.timeZoneInfo: the time zone database
	// directory.
	zoneInfo string
}

// configOption maps one leaf option of the file to a flag, with the
// value translated by conv when set (an empty flag skips the value).
type configOption struct {
	flag string
	conv func(v string) (flag, value string, err error)
}

func choice(flag string, m map[string]string) func(string) (string, string, error) {
	return func(v string) (string, string, error) {
		out, ok := m[v]
		if !ok {
			return "", "", fmt.Errorf("bad value %q", v)
		}
		return flag, out, nil
	}
}

// configOptions are the leaf options Folio has. net.bindIp, net.bindIpAll
// and net.port together make -addr (see serverAddr).
var configOptions = map[string]configOption{
	"net.maxIncomingConnections": {flag: "max-connections"},
	"net.compression.compressors": {conv: func(v string) (string, string, error) {
		if v == "disabled" {
			v = ""
		}
		return "compressors", v, nil
	}},
	"net.tls.mode":                                {flag: "tls-mode"},
	"net.tls.certificateKeyFile":                  {flag: "tls-certificate-key-file"},
	"net.tls.CAFile":                              {flag: "tls-ca-file"},
	"net.tls.allowConnectionsWithoutCertificates": {flag: "tls-allow-connections-without-certificates"},
	"storage.dbPath":                              {flag: "dbpath"},
	"security.authorization":                      {conv: choice("auth", map[string]string{"enabled": "true", "disabled": "false"})},
	"security.javascriptEnabled":                  {flag: "javascript-enabled"},
	"security.authenticationMechanisms":           {flag: "authentication-mechanisms"},
	"setParameter.enableTestCommands":             {flag: "enable-test-commands"},
	"setParameter.authenticationMechanisms":       {flag: "authentication-mechanisms"},
	"systemLog.quiet":                             {flag: "quiet"},
	"replication.replSetName":                     {flag: "replset"},
	"replication.oplogSizeMB":                     {flag: "oplog-size-mb"},
	"setParameter.maxNumberOfTransactionOperationsInSingleOplogEntry": {flag: "max-txn-ops-per-oplog-entry"},
	"operationProfiling.mode":              {conv: choice("profile", map[string]string{"off": "0", "slowOp": "1", "all": "2"})},
	"operationProfiling.slowOpThresholdMs": {flag: "slowms"},
	"operationProfiling.slowOpSampleRate":  {flag: "slow-op-sample-rate"},
	"systemLog.path":                       {flag: "log-path"},
	"systemLog.logAppend":                  {flag: "log-append"},
	"systemLog.logRotate":                  {flag: "log-rotate"},
	"systemLog.destination": {conv: func(v string) (string, string, error) {
		if v != "file" {
			return "", "", fmt.Errorf("only file is supported (without systemLog, the log goes to standard error)")
		}
		return "", "", nil
	}},
	"systemLog.verbosity": {conv: func(v string) (string, string, error) {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < 0 || n > 5:
			return "", "", fmt.Errorf("want an integer from 0 to 5")
		case n > 0:
			return "log-level", "debug", nil
		}
		return "", "", nil
	}},
	"processManagement.fork": {conv: func(v string) (string, string, error) {
		if b, err := strconv.ParseBool(v); err != nil || b {
			return "", "", errors.New("folio does not fork: run it under a service manager")
		}
		return "", "", nil
	}},
}

// loadConfig reads the configuration file at path.
func loadConfig(path string) (*serverConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(data)
}

// parseConfig reads a configuration file's contents.
func parseConfig(data []byte) (*serverConfig, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("reading the configuration file: %w", err)
	}
	cfg := &serverConfig{}
	if len(root.Content) == 0 {
		return cfg, nil
	}
	var addr struct{ ip, port string }
	var bindAll bool
	var errs []error
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		if n.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Errorf("configuration file: %s must be a mapping of options", orRoot(prefix)))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			name := key
			if prefix != "" {
				name = prefix + "." + key
			}
			switch {
			case name == "setParameter":
				errs = append(errs, cfg.readParameters(val))
				continue
			case name == "operationProfiling.filter":
				filter, err := yamlToBSON(val)
				if err == nil {
					var js []byte
					if js, err = bson.MarshalExtJSON(filter, true, false); err == nil {
						cfg.settings = append(cfg.settings, configSetting{name, "profile-filter", string(js)})
					}
				}
				errs = append(errs, err)
				continue
			case val.Kind == yaml.MappingNode:
				walk(name, val)
				continue
			case name == "security.authenticationMechanisms" && val.Kind == yaml.SequenceNode:
				// a list, as mongod takes it, or a comma-separated string
				list, err := scalarList(val)
				if err != nil {
					errs = append(errs, fmt.Errorf("configuration file: %s: %w", name, err))
				} else {
					cfg.settings = append(cfg.settings, configSetting{name, "authentication-mechanisms", list})
				}
				continue
			case val.Kind != yaml.ScalarNode:
				errs = append(errs, fmt.Errorf("configuration file: %s: want a single value", name))
				continue
			}
			switch name {
			case "net.bindIp":
				addr.ip = val.Value
				continue
			case "net.port":
				addr.port = val.Value
				continue
			case "net.bindIpAll":
				b, err := strconv.ParseBool(val.Value)
				if err != nil {
					errs = append(errs, fmt.Errorf("configuration file: net.bindIpAll: %w", err))
				}
				bindAll = b
				continue
			case "processManagement.timeZoneInfo":
				cfg.zoneInfo = val.Value
				continue
			}
			opt, ok := configOptions[name]
			if !ok {
				errs = append(errs, fmt.Errorf("configuration file: unrecognized option: %s (Folio does not support it)", name))
				continue
			}
			flag, value := opt.flag, val.Value
			if opt.conv != nil {
				var err error
				if flag, value, err = opt.conv(val.Value); err != nil {
					errs = append(errs, fmt.Errorf("configuration file: %s: %w", name, err))
					continue
				}
			}
			if flag != "" {
				cfg.settings = append(cfg.settings, configSetting{name, flag, value})
			}
		}
	}
	walk("", root.Content[0])
	// as mongod, setParameter's authenticationMechanisms wins over
	// security.authenticationMechanisms
	if slices.ContainsFunc(cfg.settings, func(c configSetting) bool { return c.option == "setParameter.authenticationMechanisms" }) {
		cfg.settings = slices.DeleteFunc(cfg.settings, func(c configSetting) bool { return c.option == "security.authenticationMechanisms" })
	}
	if addr.ip != "" || addr.port != "" || bindAll {
		a, err := serverAddr(addr.ip, addr.port, bindAll)
		if err != nil {
			errs = append(errs, err)
		} else {
			cfg.settings = append(cfg.settings, configSetting{"net", "addr", a})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg, nil
}

func orRoot(prefix string) string {
	if prefix == "" {
		return "the file"
	}
	return prefix
}

// serverAddr is the listen address of net.bindIp (MongoDB's default
// localhost), net.bindIpAll and net.port (default 27017). Folio listens on
// one address.
func serverAddr(ip, port string, all bool) (string, error) {
	switch {
	case all && ip != "":
		return "", errors.New("configuration file: net.bindIp and net.bindIpAll are mutually exclusive")
	case all:
		ip = "0.0.0.0"
	case ip == "":
		ip = "127.0.0.1"
	case strings.Contains(ip, ","):
		return "", fmt.Errorf("configuration file: net.bindIp %q: Folio listens on one address", ip)
	case ip == "localhost":
		ip = "127.0.0.1"
	}
	if port == "" {
		port = "27017"
	}
	return net.JoinHostPort(ip, port), nil
}

// readParameters reads the setParameter section: name: value pairs. A
// parameter set only at startup, which a flag of Folio's stands for
// (setParameter.<name> in configOptions), sets its flag; the others are
// set as setParameter sets them.
func (cfg *serverConfig) readParameters(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return errors.New("configuration file: setParameter must be a mapping of parameters")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, val := n.Content[i].Value, n.Content[i+1]
		if opt, ok := configOptions["setParameter."+name]; ok {
			// mongod's setParameter values are strings: a list is
			// comma-separated
			v, err := scalarList(val)
			if err != nil {
				return fmt.Errorf("configuration file: setParameter.%s: %w", name, err)
			}
			cfg.settings = append(cfg.settings, configSetting{"setParameter." + name, opt.flag, v})
			continue
		}
		v, err := yamlToBSON(val)
		if err != nil {
			return fmt.Errorf("configuration file: setParameter.%s: %w", name, err)
		}
		cfg.params = append(cfg.params, bson.E{Key: name, Value: v})
	}
	return nil
}

// scalarList reads a scalar as it is written, or a sequence of scalars
// joined by commas.
func scalarList(n *yaml.Node) (string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.SequenceNode:
		var items []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return "", errors.New("want a list of values")
			}
			items = append(items, c.Value)
		}
		return strings.Join(items, ","), nil
	}
	return "", errors.New("want a value or a list of values")
}

// yamlToBSON converts a YAML value to BSON's: mappings to documents (in
// their order), sequences to arrays, scalars to what YAML types them.
func yamlToBSON(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		d := bson.D{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := yamlToBSON(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			d = append(d, bson.E{Key: n.Content[i].Value, Value: v})
		}
		return d, nil
	case yaml.SequenceNode:
		a := bson.A{}
		for _, c := range n.Content {
			v, err := yamlToBSON(c)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		if i, ok := v.(int); ok {
			if int64(int32(i)) == int64(i) {
				return int32(i), nil
			}
			return int64(i), nil
		}
		return v, nil
	}
	return nil, fmt.Errorf("unsupported YAML value at line %d", n.Line)
}

// applyConfig sets the flags cfg stands for, but those given on the
// command line or through their environment variable, which win.
func applyConfig(fs *flag.FlagSet, cfg *serverConfig) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range cfg.settings {
		f := fs.Lookup(s.flag)
		if f == nil {
			return fmt.Errorf("configuration file: %s: no flag -%s", s.option, s.flag)
		}
		if given[s.flag] {
			continue
		}
		if name := envOf(f); name != "" {
			if _, set := os.LookupEnv(name); set {
				continue
			}
		}
		if err := fs.Set(s.flag, s.value); err != nil {
			return fmt.Errorf("configuration file: %s: %w", s.option, err)
		}
	}
	return nil
}

// envOf is the environment variable a flag's usage names ("(env NAME" or
// "(env NAME=1"), "" for none.
func envOf(f *flag.Flag) string {
	_, after, ok := strings.Cut(f.Usage, "(env ")
	if !ok {
		return ""
	}
	end := strings.IndexFunc(after, func(r rune) bool { return r != '_' && (r < 'A' || r > 'Z') && (r < '0' || r > '9') })
	if end < 0 {
		return after
	}
	return after[:end]
}
