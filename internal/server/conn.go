package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/commands"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/wire"
)

// uncompressed are the commands whose replies are never compressed, as the
// compression spec requires (the handshake and authentication).
var uncompressed = map[string]bool{
	"hello": true, "isMaster": true, "ismaster": true, "saslStart": true, "saslContinue": true,
	"getnonce": true, "authenticate": true, "createUser": true, "updateUser": true,
	"copydbSaslStart": true, "copydbgetnonce": true, "copydb": true,
}

// conn is one client connection.
type conn struct {
	srv    *Server
	nc     net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	info   commands.Conn
	nextID int32
	out    []byte
}

func (s *Server) serveConn(nc net.Conn) {
	c := &conn{
		srv:  s,
		nc:   nc,
		r:    bufio.NewReaderSize(nc, 64<<10),
		w:    bufio.NewWriterSize(nc, 64<<10),
		info: commands.Conn{ID: s.nextID.Add(1), Remote: nc.RemoteAddr().String()},
	}
	for {
		err := c.handle()
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF) {
			s.log.Warn("closing connection", "conn", c.info.ID, "remote", c.info.Remote, "err", err)
		}
		return
	}
}

// handle reads one message, runs it and writes the reply. An error ends the
// connection.
func (c *conn) handle() error {
	h, body, err := wire.ReadMessage(c.r)
	if err != nil {
		return err
	}
	traffic := &c.srv.svc.Net
	traffic.NumRequests.Add(1)
	traffic.PhysicalBytesIn.Add(int64(h.Length))
	compressor := -1
	if h.OpCode == wire.OpCompressed {
		var id byte
		if h, body, id, err = wire.Decompress(h, body); err != nil {
			return err
		}
		compressor = int(id)
	}
	traffic.BytesIn.Add(int64(h.Length))
	switch h.OpCode {
	case wire.OpMsg:
		return c.handleMsg(h, body, compressor)
	case wire.OpQuery:
		return c.handleQuery(h, body)
	}
	return fmt.Errorf("unsupported opcode %v", h.OpCode)
}

func (c *conn) handleMsg(h wire.Header, body []byte, compressor int) error {
	msg, err := wire.ParseMsg(h, body)
	if err != nil {
		return err
	}
	cmd, err := msg.Command()
	if err != nil {
		return err
	}
	var reply bson.Raw
	db, derr := cmd.LookupErr("$db")
	if derr != nil || db.Type != bson.TypeString {
		reply = commands.ErrorReply(mongoerr.New(mongoerr.Code(40571), "OP_MSG requests require a $db argument"))
	} else {
		reply = c.srv.svc.Run(&commands.Request{DB: db.StringValue(), Cmd: cmd, Conn: &c.info})
	}
	if msg.MoreToCome() {
		return nil
	}
	c.nextID++
	c.out = wire.AppendMsg(c.out[:0], c.nextID, h.RequestID, 0, reply)
	c.srv.svc.Net.BytesOut.Add(int64(len(c.out)))
	if compressor >= 0 && !uncompressed[commands.Name(cmd)] {
		if c.out, err = wire.Compress(nil, c.out, byte(compressor), -1); err != nil {
			return err
		}
	}
	return c.write()
}

// handleQuery serves the legacy OP_QUERY handshake. As in MongoDB 6+, only
// hello and isMaster may use OP_QUERY; other commands get an error reply.
func (c *conn) handleQuery(h wire.Header, body []byte) error {
	q, err := wire.ParseQuery(body)
	if err != nil {
		return err
	}
	db, isCmd := strings.CutSuffix(q.FullCollectionName, ".$cmd")
	cmd := q.Query
	if wrapped, err := cmd.LookupErr("$query"); err == nil && wrapped.Type == bson.TypeEmbeddedDocument {
		cmd = wrapped.Document()
	}
	var reply bson.Raw
	switch name := commands.Name(cmd); {
	case !isCmd:
		reply = commands.ErrorReply(mongoerr.New(mongoerr.Code(5739101), "OP_QUERY is no longer supported for queries; use the find command"))
	case name == "hello" || name == "isMaster" || name == "ismaster":
		reply = c.srv.svc.Run(&commands.Request{DB: db, Cmd: cmd, Conn: &c.info})
	default:
		reply = commands.ErrorReply(mongoerr.New(mongoerr.Code(352),
			"Unsupported OP_QUERY command: %s. The client driver may require an upgrade.", name))
	}
	c.nextID++
	c.out = wire.AppendReply(c.out[:0], c.nextID, h.RequestID, 0, 0, 0, reply)
	c.srv.svc.Net.BytesOut.Add(int64(len(c.out)))
	return c.write()
}

func (c *conn) write() error {
	c.srv.svc.Net.PhysicalBytesOut.Add(int64(len(c.out)))
	if _, err := c.w.Write(c.out); err != nil {
		return err
	}
	if cap(c.out) > 1<<20 {
		c.out = nil
	}
	return c.w.Flush()
}
