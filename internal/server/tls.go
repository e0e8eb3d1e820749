package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/folio-db/folio/internal/auth"
)

// TLSMode is MongoDB's net.tls.mode for incoming connections.
type TLSMode int

const (
	// TLSDisabled serves plain connections only.
	TLSDisabled TLSMode = iota
	// TLSAllow and TLSPrefer serve TLS and plain connections alike (they
	// differ in MongoDB only for connections a server opens itself, which
	// Folio does not).
	TLSAllow
	TLSPrefer
	// TLSRequire closes plain connections.
	TLSRequire
)

var tlsModeNames = []string{"disabled", "allowTLS", "preferTLS", "requireTLS"}

func (m TLSMode) String() string { return tlsModeNames[m] }

// ParseTLSMode reads a mode by MongoDB's name.
func ParseTLSMode(s string) (TLSMode, error) {
	for i, n := range tlsModeNames {
		if s == n {
			return TLSMode(i), nil
		}
	}
	return 0, fmt.Errorf("bad TLS mode %q: want disabled, allowTLS, preferTLS or requireTLS", s)
}

// TLSOptions are MongoDB's net.tls settings Folio honours.
type TLSOptions struct {
	Mode TLSMode
	// CertificateKeyFile is a PEM file holding the server's certificate
	// (chain) and its private key.
	CertificateKeyFile string
	// CAFile holds the certificates client certificates are verified
	// against. MongoDB (7.0.6 and later) refuses TLS without it.
	CAFile string
	// AllowConnectionsWithoutCertificates lets clients connect without a
	// certificate; one they present is still verified. Otherwise, as in
	// MongoDB, a client must present a certificate the CA file vouches
	// for.
	AllowConnectionsWithoutCertificates bool
}

// TLS is a server's loaded TLS setup. Its files are read again by Rotate
// (rotateCertificates): new connections use what was read last.
type TLS struct {
	Mode   TLSMode
	opts   TLSOptions
	config atomic.Pointer[tls.Config]
}

// LoadTLS checks o as mongod checks its TLS options at startup and loads
// the files it names. It returns nil for TLSDisabled.
func LoadTLS(o TLSOptions) (*TLS, error) {
	if o.Mode == TLSDisabled {
		if o.CertificateKeyFile != "" || o.CAFile != "" || o.AllowConnectionsWithoutCertificates {
			return nil, errors.New("need to enable TLS via the TLS mode when using TLS configuration parameters")
		}
		return nil, nil
	}
	if o.CertificateKeyFile == "" {
		return nil, errors.New("need a TLS certificate key file when TLS is enabled")
	}
	if o.CAFile == "" {
		return nil, errors.New("the use of TLS without specifying a chain of trust is no longer supported: give a TLS CA file")
	}
	t := &TLS{Mode: o.Mode, opts: o}
	if err := t.Rotate(); err != nil {
		return nil, err
	}
	return t, nil
}

// Rotate reads the certificate key file and the CA file again, as
// MongoDB's rotateCertificates does: connections made after it succeeded
// use the files' new content, those already made go on with the old. When
// either file cannot be used, the setup in use stays.
func (t *TLS) Rotate() error {
	o := t.opts
	cert, err := tls.LoadX509KeyPair(o.CertificateKeyFile, o.CertificateKeyFile)
	if err != nil {
		return fmt.Errorf("can not set up PEM key file %s: %w", o.CertificateKeyFile, err)
	}
	pem, err := os.ReadFile(o.CAFile)
	if err != nil {
		return fmt.Errorf("can not read the TLS CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("the TLS CA file %s holds no PEM certificate", o.CAFile)
	}
	auth := tls.RequireAndVerifyClientCert
	if o.AllowConnectionsWithoutCertificates {
		auth = tls.VerifyClientCertIfGiven
	}
	t.config.Store(&tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   auth,
		// MongoDB disables TLS 1.0 and 1.1 by default.
		MinVersion: tls.VersionTLS12,
	})
	return nil
}

// tlsHandshakeTimeout bounds a TLS handshake, so that a client that stops
// halfway does not hold its connection forever.
const tlsHandshakeTimeout = 30 * time.Second

// secure returns the stream to serve nc over: nc itself without TLS;
// otherwise, told apart by the connection's first 16 bytes as MongoDB
// does, a TLS connection once its handshake succeeded, or the plain
// connection unless the mode requires TLS. It fails (the caller closes nc)
// on a failed handshake or a refused plain connection.
//
// A client's first wire-protocol message answers nothing: the responseTo
// field of its header (bytes 8 to 11) is 0, or -1 from some old clients. A
// TLS ClientHello holds its handshake length and client version there,
// never 0 or -1.
func (s *Server) secure(nc net.Conn) (io.ReadWriter, error) {
	if s.tls == nil {
		return nc, nil
	}
	pc := &prefixConn{Conn: nc}
	if _, err := io.ReadFull(nc, pc.head[:]); err != nil {
		return nil, err
	}
	responseTo := int32(binary.LittleEndian.Uint32(pc.head[8:12]))
	if responseTo == 0 || responseTo == -1 {
		if s.tls.Mode == TLSRequire {
			s.log.Warn("refusing a connection without TLS: the TLS mode is requireTLS", "remote", nc.RemoteAddr().String())
			return nil, errPlainRefused
		}
		return pc, nil
	}
	tc := tls.Server(pc, s.tls.config.Load())
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		s.log.Warn("TLS handshake failed", "remote", nc.RemoteAddr().String(), "err", err)
		return nil, err
	}
	return tc, nil
}

var errPlainRefused = errors.New("plain connection refused: TLS required")

// peerSubject is the subject of the client certificate a TLS connection
// presented, verified against the CA file by the handshake, as MongoDB
// names its $external user; "" without TLS or without a certificate.
func peerSubject(rw io.ReadWriter) string {
	tc, ok := rw.(*tls.Conn)
	if !ok {
		return ""
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return ""
	}
	var rdns pkix.RDNSequence
	if rest, err := asn1.Unmarshal(certs[0].RawSubject, &rdns); err != nil || len(rest) > 0 {
		return ""
	}
	return auth.SubjectName(rdns)
}

// prefixConn is a connection whose first bytes (head) were already read:
// Read returns them first.
type prefixConn struct {
	net.Conn
	head [16]byte
	sent int
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if p.sent < len(p.head) {
		n := copy(b, p.head[p.sent:])
		p.sent += n
		return n, nil
	}
	return p.Conn.Read(b)
}
