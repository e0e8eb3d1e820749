package commands

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	registerAdmin(dropConnectionsCmd, dropConnectionsSpec, "dropConnections")
	authzRules["dropConnections"] = onCluster("dropConnections")
}

// dropConnectionsSpec declares dropConnections (drop_connections.idl).
var dropConnectionsSpec = &argSpec{path: "dropConnections", fields: []argField{
	required("hostAndPort", tArray),
}}

// dropConnectionsCmd closes the server's outgoing (egress) connections to
// each host:port of hostAndPort, after parsing them all as MongoDB's
// HostAndPort: {dropConnections: 1, hostAndPort: ["h:27017", ...]}. A
// Folio server opens no connection to another server (a one-member
// replica set, no shards), so once the list parses there is nothing to
// close; client connections are never touched, as in MongoDB.
// https://www.mongodb.com/docs/v7.0/reference/command/dropConnections/
func dropConnectionsCmd(_ *Service, r *Request) (bson.Raw, error) {
	vals, err := r.args.value("hostAndPort").Array().Values()
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		switch v.Type {
		case bson.TypeNull, bson.TypeUndefined:
			continue // absent, as the IDL reads an element
		case bson.TypeString:
		default:
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'dropConnections.hostAndPort.%d' is the wrong type '%s', expected type 'string'", i, values.TypeName(v.Type))
		}
		if err := parseHostAndPort(v.StringValue()); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// parseHostAndPort checks s as MongoDB's HostAndPort parses it: a host,
// then optionally ':' and a port in [1, 65535]; an IPv6 host is written
// in brackets ("[::1]:27017"), and any other host has no ':'.
func parseHostAndPort(s string) error {
	bad := func(format string, args ...any) error {
		return mongoerr.New(mongoerr.FailedToParse, format, args...)
	}
	colon := strings.LastIndexByte(s, ':')
	host := s
	if colon >= 0 {
		host = s[:colon]
	}
	open, closing := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	switch {
	case open > 0:
		return bad("'[' present, but not first character in %s", s)
	case open == 0 && closing < 0:
		return bad("ipv6 address is missing closing ']' in hostname in %s", s)
	case open == 0:
		host = s[1:closing]
		if colon < closing {
			if len(s) != closing+1 {
				return bad("missing colon after ']' before the port in %s", s)
			}
			colon = -1
		} else if colon != closing+1 {
			return bad("Extraneous characters between ']' and pre-port ':' in %s", s)
		}
	case closing >= 0:
		return bad("']' present without '[' in %s", s)
	case strings.IndexByte(s, ':') != colon:
		return bad("More than one ':' detected. If this is an ipv6 address, it needs to be surrounded by '[' and ']'; %s", s)
	}
	if host == "" {
		return bad("Empty host component parsing HostAndPort from \"%s\"", s)
	}
	if colon < 0 {
		return nil // the default port
	}
	port, err := parsePort(s[colon+1:])
	if err != nil {
		return err
	}
	if port <= 0 || port > 65535 {
		return bad("Port number %d out of range parsing HostAndPort from \"%s\"", port, s)
	}
	return nil
}

// parsePort reads a base-10 int32 as MongoDB's number parser does: an
// optional sign and digits, nothing else.
func parsePort(s string) (int64, error) {
	if s == "" {
		return 0, mongoerr.New(mongoerr.FailedToParse, "No digits")
	}
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, mongoerr.New(mongoerr.FailedToParse, "Did not consume whole string.")
	}
	if digits == "" {
		return 0, mongoerr.New(mongoerr.FailedToParse, "Did not consume any digits")
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, mongoerr.New(mongoerr.Overflow, "Overflow")
	}
	return n, nil
}
