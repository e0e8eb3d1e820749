package crash

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// proxy forwards MongoDB wire traffic from a loopback port to a server
// whose address can change (a restarted server listens on a new port), and
// can lose replies: a request it is armed to drop reaches the server, but
// its reply is never delivered; the client's connection is closed instead,
// as a network failure between write and reply would. Before closing it
// runs the armed action (a server kill and restart, say), so the client
// sees the failure, and retries, only once that is done.
type proxy struct {
	ln net.Listener

	mu       sync.Mutex
	upstream string
	// armed is the command whose next reply is lost, and then is run.
	armed string
	then  func()
	conns map[net.Conn]struct{}
}

func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
	})
	return p
}

// URI is the proxy's mongodb:// URI.
func (p *proxy) URI() string { return "mongodb://" + p.ln.Addr().String() + "/" }

// setUpstream points new connections at addr and closes the current ones.
func (p *proxy) setUpstream(addr string) {
	p.mu.Lock()
	p.upstream = addr
	p.mu.Unlock()
	p.closeAll()
}

// arm makes the proxy lose the reply of the next request of command name,
// running then before it closes that client connection.
func (p *proxy) arm(name string, then func()) {
	p.mu.Lock()
	p.armed, p.then = name, then
	p.mu.Unlock()
}

// disarmed reports whether the armed reply was lost.
func (p *proxy) disarmed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.armed == ""
}

func (p *proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *proxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		up := p.upstream
		p.mu.Unlock()
		server, err := net.Dial("tcp", up)
		if err != nil {
			client.Close()
			continue
		}
		p.track(client, server)
		go p.pipe(client, server)
	}
}

// pipe forwards requests and replies message by message until either side
// closes or a reply is dropped.
func (p *proxy) pipe(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	var mu sync.Mutex
	doomed := map[int32]func(){} // request ids whose replies are lost
	go func() {
		defer server.Close()
		for {
			msg, err := readWireMessage(client)
			if err != nil {
				return
			}
			name := commandName(msg)
			p.mu.Lock()
			if name != "" && name == p.armed {
				mu.Lock()
				doomed[int32(binary.LittleEndian.Uint32(msg[4:]))] = p.then
				mu.Unlock()
				p.armed, p.then = "", nil
			}
			p.mu.Unlock()
			if _, err := server.Write(msg); err != nil {
				return
			}
		}
	}()
	for {
		msg, err := readWireMessage(server)
		if err != nil {
			return
		}
		mu.Lock()
		then, lost := doomed[int32(binary.LittleEndian.Uint32(msg[8:]))]
		mu.Unlock()
		if lost {
			if then != nil {
				then()
			}
			return
		}
		if _, err := client.Write(msg); err != nil {
			return
		}
	}
}

func readWireMessage(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(size[:])
	if n < 16 || n > 64<<20 {
		return nil, io.ErrUnexpectedEOF
	}
	msg := make([]byte, n)
	copy(msg, size[:])
	_, err := io.ReadFull(r, msg[4:])
	return msg, err
}

// commandName is the command of an uncompressed OP_MSG request: the first
// key of its body section.
func commandName(msg []byte) string {
	const opMsg = 2013
	if binary.LittleEndian.Uint32(msg[12:]) != opMsg || len(msg) < 21 || msg[20] != 0 {
		return ""
	}
	body := bson.Raw(msg[21:])
	el, err := body.IndexErr(0)
	if err != nil {
		return ""
	}
	return el.Key()
}
