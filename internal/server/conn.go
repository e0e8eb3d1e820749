package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/commands"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
	"github.com/folio-db/folio/internal/wire"
)

// uncompressed are the commands whose replies are never compressed, as the
// compression spec requires (the handshake and authentication).
var uncompressed = map[string]bool{
	"hello": true, "isMaster": true, "ismaster": true, "saslStart": true, "saslContinue": true,
	"getnonce": true, "authenticate": true, "createUser": true, "updateUser": true,
	"copydbSaslStart": true, "copydbgetnonce": true, "copydb": true,
}

// conn is one client connection. An idle connection holds only its small
// read buffer (readBuffer bytes): a message that fits in it, as most
// commands do, arrives with one read system call instead of two (header,
// then body); a longer body is read on from the socket into a buffer sized
// as the bytes arrive. Each reply is written from a pooled buffer.
type conn struct {
	srv *Server
	// nc is the client's socket; rw the stream the messages travel on:
	// nc itself, or the TLS connection over it; r reads rw.
	nc net.Conn
	rw io.ReadWriter
	r  *bufio.Reader
	// tls is set when rw is a TLS connection, whose replies carry no
	// checksum (replyFlags).
	tls    bool
	info   commands.Conn
	nextID int32
	// disconnected ends the connection's context, and so its running
	// operation, with ClientDisconnect.
	disconnected context.CancelCauseFunc
	// running is the sequence number of the request being run, 0 between
	// requests; the disconnect watcher reads it (see watch.go).
	running atomic.Uint64
	seq     uint64
}

// readBuffer is the size of a connection's read buffer: 20,000 idle
// connections hold 20 MB of them.
const readBuffer = 1 << 10

// gatherReply is the size from which an uncompressed reply is written
// from where it was built rather than copied into a message buffer.
const gatherReply = 8 << 10

// maxPooledReply is the largest reply buffer kept for reuse.
const maxPooledReply = 1 << 20

var replyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// Bodies longer than stagedBody (insertMany's batches, mostly) are read
// into buffers pooled across connections, of at most maxStagedBody bytes
// when returned: a bulk load would otherwise allocate each message, and
// grow it as its bytes arrive, about three times its size.
const (
	stagedBody    = 64 << 10
	maxStagedBody = 16 << 20
)

var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

// errPanicked closes the connection of a request whose handler panicked.
var errPanicked = errors.New("request handler panicked")

// errFailPointClosed closes, without a reply, the connection of a request
// a test fail point closed (commands.Request.CloseConn).
var errFailPointClosed = errors.New("closed by a fail point")

// beforeRun, when set (by tests only), is called with each command before
// it runs.
var beforeRun func(cmd bson.Raw)

func (s *Server) serveConn(nc net.Conn) {
	rw, err := s.secure(nc)
	if err != nil {
		return
	}
	c := &conn{
		srv:  s,
		nc:   nc,
		rw:   rw,
		r:    bufio.NewReaderSize(rw, readBuffer),
		info: commands.Conn{ID: s.nextID.Add(1), Remote: nc.RemoteAddr().String(), PeerSubject: peerSubject(rw)},
	}
	_, c.tls = rw.(*tls.Conn)
	c.info.Ctx, c.disconnected = context.WithCancelCause(s.svc.Context())
	defer c.disconnected(nil)
	s.svc.OpenConn(&c.info)
	defer s.svc.CloseConn(&c.info)
	// MongoDB logs these at its default verbosity; Folio at debug level,
	// where setParameter's logLevel 1 shows them; neither while quiet
	// (ServiceEntryPointImpl::startSession, onClientDisconnect).
	if !s.svc.Quiet() {
		s.log.Debug("Connection accepted", "remote", c.info.Remote, "connectionId", c.info.ID)
	}
	defer func() {
		if !s.svc.Quiet() {
			s.log.Debug("Connection ended", "remote", c.info.Remote, "connectionId", c.info.ID)
		}
	}()
	s.watchConn(c)
	defer s.unwatchConn(c)
	for {
		err := c.handle()
		if err == nil && !s.setBusy(nc, false) {
			return
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errPanicked) && !errors.Is(err, errFailPointClosed) {
			s.log.Warn("closing connection", "conn", c.info.ID, "remote", c.info.Remote, "err", err)
		}
		return
	}
}

// handle reads one message, runs it and writes the reply. An error ends the
// connection. A panic while running the request is answered with an
// InternalError reply and ends the connection too.
func (c *conn) handle() (err error) {
	h, err := wire.ReadHeader(c.r)
	if err != nil {
		return err
	}
	// A large body is read into a pooled buffer, returned when the
	// request ends: what outlives it is copied out (see handleMsg).
	var staged *[]byte
	var buf []byte
	if h.Length > stagedBody {
		staged = bodyBufs.Get().(*[]byte)
		defer func() { bodyBufs.Put(staged) }()
		buf = *staged
	}
	body, err := wire.ReadBody(c.r, h, buf)
	if err != nil {
		return err
	}
	if staged != nil && cap(body) <= maxStagedBody {
		*staged = body[:0]
	}
	defer func() {
		if p := recover(); p != nil {
			err = c.recovered(h, body, p)
		}
	}()
	if !c.srv.setBusy(c.nc, true) {
		return net.ErrClosed
	}
	traffic := &c.srv.svc.Net
	traffic.NumRequests.Add(1)
	traffic.PhysicalBytesIn.Add(int64(h.Length))
	compressor := -1
	if h.OpCode == wire.OpCompressed {
		id, err := c.negotiated(body)
		if err != nil {
			return err
		}
		in := len(body) - wire.CompressedPrefix
		if h, body, _, err = wire.Decompress(h, body); err != nil {
			return err
		}
		compressor = int(id)
		traffic.Compression[id].DecompressorIn.Add(int64(in))
		traffic.Compression[id].DecompressorOut.Add(int64(len(body)))
	}
	traffic.BytesIn.Add(int64(h.Length))
	switch h.OpCode {
	case wire.OpMsg:
		return c.handleMsg(h, body, staged != nil, compressor)
	case wire.OpQuery:
		return c.handleQuery(h, body)
	case wire.OpGetMore:
		// answered, as MongoDB 7.0 answers it, with the legacy error
		return c.send(h.OpCode, h.RequestID, uint32(wire.ReplyQueryFailure), wire.UnsupportedOpReply(h.OpCode), -1)
	case wire.OpInsert, wire.OpUpdate, wire.OpDelete, wire.OpKillCursors:
		// MongoDB 7.0's runners of these fire-and-forget opcodes refuse
		// them with an assertion that ends the session.
		return fmt.Errorf("unsupported opcode %v", h.OpCode)
	}
	// Any other opcode is logged and dropped, as MongoDB's
	// UnsupportedOpRunner does: no reply, and the connection goes on.
	c.srv.log.Info("Operation is not supported", "conn", c.info.ID, "remote", c.info.Remote, "operation", int32(h.OpCode))
	return nil
}

// negotiated returns the compressor of an OP_COMPRESSED body, which must be
// one hello negotiated on this connection (or noop, once one was).
func (c *conn) negotiated(body []byte) (byte, error) {
	id, ok := wire.PeekCompressor(body)
	if !ok {
		return 0, fmt.Errorf("%w: OP_COMPRESSED of %d bytes is truncated", wire.ErrProtocol, len(body))
	}
	if len(c.info.Compressors) == 0 {
		return 0, fmt.Errorf("%w: OP_COMPRESSED received but no compressor was negotiated in hello", wire.ErrProtocol)
	}
	if id != wire.CompressorNoop && !slices.Contains(c.info.Compressors, wire.CompressorName(id)) {
		return 0, fmt.Errorf("%w: OP_COMPRESSED with compressor id %d, which was not negotiated", wire.ErrProtocol, id)
	}
	return id, nil
}

// recovered answers a request whose handler panicked with p: it logs the
// stack, replies InternalError unless the client expects no reply, and
// returns errPanicked so that the connection closes.
func (c *conn) recovered(h wire.Header, body []byte, p any) error {
	c.srv.log.Error("request handler panicked; closing the connection",
		"conn", c.info.ID, "remote", c.info.Remote, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	reply := commands.ErrorReply(mongoerr.New(mongoerr.InternalError, "internal error while running the request: %v", p))
	switch {
	case h.OpCode == wire.OpMsg && wire.PeekMsgFlags(body)&wire.MoreToCome == 0, h.OpCode == wire.OpQuery:
		_ = c.reply(h, wire.PeekMsgFlags(body), reply, -1)
	}
	return errPanicked
}

func (c *conn) handleMsg(h wire.Header, body []byte, staged bool, compressor int) error {
	msg, err := wire.ParseMsg(h, body)
	var cmd bson.Raw
	if err == nil {
		cmd, err = msg.Command()
	}
	if answerable(err) {
		if wire.PeekMsgFlags(body)&wire.MoreToCome != 0 {
			return nil
		}
		return c.reply(h, wire.PeekMsgFlags(body), c.srv.svc.ParseErrorReply(err), compressor)
	}
	if err != nil {
		return err
	}
	if staged && len(msg.Sequences) == 0 {
		// cmd is the body, whose buffer is reused once the request
		// ends, and commands keep parts of theirs (a cursor its
		// filter); with sequences, cmd is a new document.
		cmd = bytes.Clone(cmd)
	}
	var reply bson.Raw
	var r *commands.Request
	// $db is read as MongoDB's OpMsgRequest::getDatabase reads it: absent,
	// 40571; not a string, checkAndGetStringData's 13111.
	db, derr := cmd.LookupErr("$db")
	if derr != nil {
		reply = commands.ErrorReply(mongoerr.New(mongoerr.OpMsgMissingDB, "OP_MSG requests require a $db argument"))
	} else if db.Type != bson.TypeString {
		reply = commands.ErrorReply(mongoerr.New(mongoerr.BSONElementWrongType, "wrong type for field ($db) %s != string", values.TypeName(db.Type)))
	} else {
		// A cursor reply is built in a pooled buffer, returned once the
		// reply is sent (or dropped): an idle connection keeps none.
		buf := replyBufs.Get().(*[]byte)
		r = &commands.Request{DB: db.StringValue(), Cmd: cmd, Conn: &c.info, Scratch: (*buf)[:0], ExhaustAllowed: msg.ExhaustAllowed()}
		defer func() {
			if cap(r.Scratch) <= maxPooledReply {
				*buf = r.Scratch[:0]
				replyBufs.Put(buf)
			}
		}()
		reply = c.run(r)
		if r.CloseConn {
			return errFailPointClosed
		}
	}
	if msg.MoreToCome() {
		return nil
	}
	if uncompressed[commands.Name(cmd)] {
		compressor = -1
	}
	if r != nil && r.Next != nil {
		return c.stream(h, c.replyFlags(msg.Flags), r, reply, compressor)
	}
	return c.reply(h, msg.Flags, reply, compressor)
}

// answerable reports whether err, raised parsing an OP_MSG that was read
// whole, is answered with an error reply on a connection that stays open,
// as MongoDB's receivedCommands answers every OpMsg::parse failure (a
// duplicate document sequence, 40431; a sequence repeating a body field,
// 40433; two bodies, an unknown section kind, no body; malformed or too
// deeply nested BSON) but those of its ConnectionFatalMessageParseError
// class, which wire wraps in ErrProtocol and which close the connection.
func answerable(err error) bool {
	if err == nil || errors.Is(err, wire.ErrProtocol) {
		return false
	}
	_, ok := errors.AsType[*mongoerr.Error](err)
	return ok
}

// stream answers a request whose command streams its replies (an exhaust
// hello or getMore): it sends reply with moreToCome, then runs the command's next
// invocation (r.Next) and sends its reply, unasked, as the answer to the
// previous reply, until a run fails or no longer asks for another; the
// last reply goes without moreToCome. The client sends nothing meanwhile.
// A reply that cannot be sent (the client went away) ends the stream and
// its cursor (Service.EndExhaust).
func (c *conn) stream(h wire.Header, base uint32, r *commands.Request, reply bson.Raw, compressor int) error {
	responseTo := h.RequestID
	for {
		flags := base
		if r.Next != nil {
			flags |= wire.MoreToCome
		}
		if err := c.send(h.OpCode, responseTo, flags, reply, compressor); err != nil || r.Next == nil {
			if err != nil && r.Next != nil {
				c.srv.svc.EndExhaust(r.Next)
			}
			return err
		}
		responseTo = c.nextID
		r = &commands.Request{DB: r.DB, Cmd: r.Next, Conn: &c.info, ExhaustAllowed: true}
		if reply = c.run(r); r.CloseConn {
			return errFailPointClosed
		}
	}
}

// handleQuery answers a legacy OP_QUERY as MongoDB 7.0 does: one to a
// namespace other than <db>.$cmd (a query) gets {$err, code, ok: 0} with
// QueryFailure set; a command is upconverted (wire.Query.Command) and, if
// it is one MongoDB still takes over OP_QUERY (commands.CheckOpQuery), run
// as over OP_MSG, on the connection's authentication state. Its reply, or
// the error refusing it, goes back in an OP_REPLY.
func (c *conn) handleQuery(h wire.Header, body []byte) error {
	q, err := wire.ParseQuery(body)
	if wire.TooDeep(err) {
		return c.reply(h, 0, c.srv.svc.ParseErrorReply(err), -1)
	}
	if err != nil {
		return err
	}
	db, isCmd := q.CommandDB()
	if !isCmd {
		return c.send(h.OpCode, h.RequestID, uint32(wire.ReplyQueryFailure), wire.UnsupportedOpReply(h.OpCode), -1)
	}
	// cmd is a new document: nothing aliases the body's buffer
	cmd, err := q.Command(db)
	if err == nil {
		err = commands.CheckOpQuery(commands.Name(cmd))
	}
	if err != nil {
		return c.reply(h, 0, c.srv.svc.ParseErrorReply(err), -1)
	}
	r := &commands.Request{DB: db, Cmd: cmd, Conn: &c.info}
	reply := c.run(r)
	if r.CloseConn {
		return errFailPointClosed
	}
	return c.reply(h, 0, reply, -1)
}

// run runs one command, marked as running for the disconnect watcher.
func (c *conn) run(r *commands.Request) bson.Raw {
	if beforeRun != nil {
		beforeRun(r.Cmd)
	}
	c.seq++
	c.running.Store(c.seq)
	defer c.running.Store(0)
	return c.srv.svc.Run(r)
}

// reply sends doc as the answer to the request with header h: an OP_REPLY
// to an OP_QUERY, with AwaitCapable set as MongoDB sets it on a command's
// reply, else an OP_MSG with the flags replyFlags gives the request's
// (reqFlags), compressed with compressor unless it is negative.
func (c *conn) reply(h wire.Header, reqFlags uint32, doc bson.Raw, compressor int) error {
	flags := c.replyFlags(reqFlags)
	if h.OpCode == wire.OpQuery {
		flags = uint32(wire.ReplyAwaitCapable)
	}
	return c.send(h.OpCode, h.RequestID, flags, doc, compressor)
}

// replyFlags returns the OP_MSG flags of every reply to a request with
// flags reqFlags: ChecksumPresent when the request carried a checksum,
// unless the connection is TLS, as MongoDB's session workflow checksums
// the reply (and each reply of an exhaust stream) to a checksummed request
// on a connection without TLS.
func (c *conn) replyFlags(reqFlags uint32) uint32 {
	if reqFlags&wire.ChecksumPresent != 0 && !c.tls {
		return wire.ChecksumPresent
	}
	return 0
}

// send sends doc as the answer to the message responseTo, an OP_REPLY with
// responseFlags flags when that was a legacy op (op.Legacy), else an OP_MSG with
// flags, compressed with compressor unless it is negative. The message is
// built in a pooled buffer.
func (c *conn) send(op wire.OpCode, responseTo int32, flags uint32, doc bson.Raw, compressor int) error {
	c.nextID++
	if tcp, ok := c.rw.(*net.TCPConn); ok && !op.Legacy() && compressor < 0 && flags&wire.ChecksumPresent == 0 && len(doc) >= gatherReply {
		// The message's start and the reply go out in one writev,
		// without copying the reply.
		var start [32]byte
		bufs := net.Buffers{wire.AppendMsgStart(start[:0], c.nextID, responseTo, flags, len(doc)), doc}
		n := int64(len(bufs[0]) + len(doc))
		c.srv.svc.Net.BytesOut.Add(n)
		c.srv.svc.Net.PhysicalBytesOut.Add(n)
		_, err := bufs.WriteTo(tcp)
		return err
	}
	buf := replyBufs.Get().(*[]byte)
	out := (*buf)[:0]
	if op.Legacy() {
		out = wire.AppendReply(out, c.nextID, responseTo, int32(flags), 0, 0, doc)
	} else {
		out = wire.AppendMsg(out, c.nextID, responseTo, flags, doc)
	}
	c.srv.svc.Net.BytesOut.Add(int64(len(out)))
	*buf = out
	defer func() {
		if cap(*buf) <= maxPooledReply {
			replyBufs.Put(buf)
		}
	}()
	if compressor >= 0 {
		in := len(out) - wire.HeaderSize
		var err error
		if out, err = wire.Compress(nil, out, byte(compressor), -1); err != nil {
			return err
		}
		counts := &c.srv.svc.Net.Compression[compressor]
		counts.CompressorIn.Add(int64(in))
		counts.CompressorOut.Add(int64(len(out) - wire.HeaderSize - wire.CompressedPrefix))
	}
	c.srv.svc.Net.PhysicalBytesOut.Add(int64(len(out)))
	_, err := c.rw.Write(out)
	return err
}
