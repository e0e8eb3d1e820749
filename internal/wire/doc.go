// Package wire frames MongoDB wire-protocol messages: it reads whole messages
// off a connection, parses OP_MSG and the legacy OP_QUERY used by handshakes
// (upconverting an OP_QUERY command to the body an OP_MSG would carry),
// unwraps and produces OP_COMPRESSED, and appends OP_MSG and OP_REPLY replies.
// It knows nothing about what commands do.
//
// Errors follow one rule: an error that is a *mongoerr.Error describes a
// request the server can still answer with a command error; any other error
// means the byte stream can no longer be trusted and the connection must be
// closed. The framing errors all wrap ErrProtocol.
//
// Parsed documents alias the buffer they were parsed from: a caller must not
// reuse that buffer while the parsed message is in use.
package wire

import "errors"

// ErrProtocol is wrapped by every error that requires closing the connection.
var ErrProtocol = errors.New("wire protocol violation")
