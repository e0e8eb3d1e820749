package commands

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	registerTest(configureFailPointCmd, configureFailPointSpec, "configureFailPoint")
}

// configureFailPointSpec declares configureFailPoint, which MongoDB parses
// without an IDL: the fail point's name is the command's value.
var configureFailPointSpec = func() *argSpec {
	s := untyped("configureFailPoint", arg("mode", tAny), arg("data", tDoc))
	s.subs = []*argSpec{failCommandDataSpec, primaryWriteDataSpec, getMoreFailDataSpec}
	return s
}()

// failCommandDataSpec declares the data of the failCommand fail point.
var failCommandDataSpec = &argSpec{path: "failCommand.data", fields: []argField{
	arg("failCommands", tLooseArray),
	arg("closeConnection", tBool),
	arg("errorCode", tInt32),
	arg("errorLabels", tLooseArray),
	arg("writeConcernError", tDoc),
	arg("blockConnection", tBool),
	arg("blockTimeMS", tLong),
	arg("appName", tString),
	// Folio runs no internal client whose commands it could fail.
	arg("failInternalCommands", tBool),
	refuse("errorExtraInfo", tDoc, "extra error information"),
	refuse("namespace", tString, "failing only the commands on one namespace"),
}}

// configureFailPointCmd sets a fail point, as MongoDB does with
// enableTestCommands (-enable-test-commands), for driver test suites:
// {configureFailPoint: <name>, mode, data}. The mode is "alwaysOn", "off",
// {times: n} (the next n times it could act), {skip: n} (all but the next
// n) or {activationProbability: p}. The reply counts the times the fail
// point acted before. Without test commands the command does not exist,
// as in MongoDB; fail points other than these five are refused:
//   - failCommand: a command named in data.failCommands (by its name
//     or an alias: isMaster and ismaster name one command; of the
//     application data.appName, when given) has its connection closed
//     (closeConnection), waits blockTimeMS (blockConnection), fails with
//     errorCode (and errorLabels), or runs and gets writeConcernError in
//     its reply;
//   - onPrimaryTransactionalWrite: a statement (an insert's document) of
//     a retryable write runs and has its connection closed without a
//     reply (unless data.closeConnection is false), or with
//     data.failBeforeCommitExceptionCode fails unapplied;
//   - failGetMoreAfterCursorCheckout: a getMore that found its cursor
//     (of the application data.appName, when given) fails with
//     data.errorCode;
//   - maxTimeAlwaysTimeOut: a command with a time limit (its maxTimeMS,
//     or for a getMore its cursor's) fails with MaxTimeMSExpired before
//     it does anything;
//   - maxTimeNeverTimeOut: a command with a time limit runs without it;
//   - hangAfterStartingIndexBuild: an index build whose indexes are in
//     the catalog waits, before it reads the collection, until the fail
//     point is off or its operation is interrupted.
//
// https://github.com/mongodb/mongo/wiki/The-%22failCommand%22-fail-point
func configureFailPointCmd(s *Service, r *Request) (bson.Raw, error) {
	name, ok := r.args.first().StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "configureFailPoint takes the name of a fail point as a string")
	}
	mode, err := parseFailMode(r.args.value("mode"))
	if err != nil {
		return nil, err
	}
	var entered int64
	switch name {
	case "failCommand":
		var data failCommandData
		if mode.kind != failOff {
			if data, err = parseFailCommandData(r.args.doc("data")); err != nil {
				return nil, err
			}
		}
		entered = s.failCommand.set(mode, data)
	case "onPrimaryTransactionalWrite":
		a, err := parseSub(r.args.doc("data"), primaryWriteDataSpec)
		if err != nil {
			return nil, err
		}
		data := primaryWriteData{closeConnection: a.bool("closeConnection")}
		if a.has("failBeforeCommitExceptionCode") {
			code, _ := values.Int64(a.value("failBeforeCommitExceptionCode"))
			data.failBeforeCommit = mongoerr.Code(code)
		}
		entered = s.primaryWrite.set(mode, data)
	case "failGetMoreAfterCursorCheckout":
		a, err := parseSub(r.args.doc("data"), getMoreFailDataSpec)
		if err != nil {
			return nil, err
		}
		code, _ := a.value("errorCode").Int32OK()
		data := getMoreFailData{code: mongoerr.Code(code), closeConnection: a.bool("closeConnection"), appName: a.str("appName")}
		if data.code == mongoerr.OK && mode.kind != failOff {
			return nil, mongoerr.New(mongoerr.BadValue, "failGetMoreAfterCursorCheckout needs data with a non-zero errorCode")
		}
		entered = s.getMoreFail.set(mode, data)
	case "maxTimeAlwaysTimeOut":
		entered = s.maxTimeAlways.set(mode, struct{}{})
	case "maxTimeNeverTimeOut":
		entered = s.maxTimeNever.set(mode, struct{}{})
	case "hangAfterStartingIndexBuild":
		entered = s.hangBuild.set(mode, struct{}{})
	default:
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the fail point '%s' (only failCommand, onPrimaryTransactionalWrite, failGetMoreAfterCursorCheckout, maxTimeAlwaysTimeOut, maxTimeNeverTimeOut and hangAfterStartingIndexBuild)", name)
	}
	return marshal(bson.D{{Key: "count", Value: entered}}), nil
}

// primaryWriteDataSpec declares the data of the onPrimaryTransactionalWrite
// fail point.
var primaryWriteDataSpec = &argSpec{path: "onPrimaryTransactionalWrite.data", fields: []argField{
	withDefault("closeConnection", tBool, 1),
	arg("failBeforeCommitExceptionCode", tLong),
}}

// getMoreFailDataSpec declares the data of the
// failGetMoreAfterCursorCheckout fail point.
var getMoreFailDataSpec = &argSpec{path: "failGetMoreAfterCursorCheckout.data", fields: []argField{
	arg("errorCode", tInt32),
	arg("closeConnection", tBool),
	arg("appName", tString),
}, open: "MongoDB matches a getMore against this data as against failCommand's, with failCommands set to getMore, and reads nothing else: drivers' tests send failCommands and errmsg, which it ignores"}

// getMoreFailData is what the failGetMoreAfterCursorCheckout fail point
// does to a getMore once it found its cursor: fail it with code (which
// ends the cursor), closing the connection if closeConnection; only a
// getMore of the application appName, when given.
type getMoreFailData struct {
	code            mongoerr.Code
	closeConnection bool
	appName         string
}

// failGetMore applies the failGetMoreAfterCursorCheckout fail point to a
// getMore that found its cursor.
func (s *Service) failGetMore(r *Request) error {
	d, ok := s.getMoreFail.check(func(d getMoreFailData) bool {
		return d.appName == "" || r.Conn != nil && r.Conn.AppName == d.appName
	})
	if !ok {
		return nil
	}
	r.CloseConn = d.closeConnection
	return mongoerr.New(d.code, "Failing command via 'failGetMoreAfterCursorCheckout' failpoint")
}

// expireAtOnce applies the maxTimeAlwaysTimeOut fail point to a command
// that has a time limit: MongoDB's operation then fails its first
// interrupt check, which every command makes before its work.
func (s *Service) expireAtOnce() error {
	if _, ok := s.maxTimeAlways.check(nil); ok {
		return errMaxTimeMS
	}
	return nil
}

// neverExpire applies the maxTimeNeverTimeOut fail point to a command
// that has a time limit: the limit is not enforced.
func (s *Service) neverExpire() bool {
	_, ok := s.maxTimeNever.check(nil)
	return ok
}

// hangAfterStartingBuild applies the hangAfterStartingIndexBuild fail
// point to a build whose indexes are in the catalog: it waits while the
// fail point is on, or until ctx ends.
func (s *Service) hangAfterStartingBuild(ctx context.Context) error {
	if _, ok := s.hangBuild.check(nil); !ok {
		return nil
	}
	t := time.NewTicker(failPointPoll)
	defer t.Stop()
	for s.hangBuild.on.Load() {
		select {
		case <-ctx.Done():
			return mongoerr.Interruption(ctx)
		case <-t.C:
		}
	}
	return nil
}

// failPointPoll is how often an operation a fail point holds looks
// whether it was turned off.
const failPointPoll = 10 * time.Millisecond

// primaryWriteData is what the onPrimaryTransactionalWrite fail point does
// to a retryable write: fail it before its commit, so that it is not
// applied, and close its connection without a reply (by default), so that
// the client does not know whether it was.
type primaryWriteData struct {
	closeConnection  bool
	failBeforeCommit mongoerr.Code
}

// failModeKind is how a fail point decides to act.
type failModeKind int

const (
	failOff failModeKind = iota
	failAlways
	failTimes       // the next n matches
	failSkip        // all matches after the next n
	failProbability // each match with probability p
)

type failMode struct {
	kind failModeKind
	n    int64
	p    float64
}

// parseFailMode reads a fail point's mode.
func parseFailMode(v bson.RawValue) (failMode, error) {
	switch v.Type {
	case bson.TypeString:
		switch v.StringValue() {
		case "off":
			return failMode{kind: failOff}, nil
		case "alwaysOn":
			return failMode{kind: failAlways}, nil
		}
	case bson.TypeEmbeddedDocument:
		// As MongoDB reads it: times, else skip, else
		// activationProbability; other fields are ignored.
		mode := v.Document()
		for _, key := range []string{"times", "skip"} {
			e, err := mode.LookupErr(key)
			if err != nil {
				continue
			}
			n, ok := values.Int64(e)
			if !ok || n < 0 {
				return failMode{}, mongoerr.New(mongoerr.BadValue, "'%s' must be a non-negative integer", key)
			}
			switch {
			case key == "skip":
				return failMode{kind: failSkip, n: n}, nil
			case n == 0:
				return failMode{kind: failOff}, nil
			}
			return failMode{kind: failTimes, n: n}, nil
		}
		if e, err := mode.LookupErr("activationProbability"); err == nil {
			p, ok := values.Float64(e)
			if !ok || p < 0 || p > 1 {
				return failMode{}, mongoerr.New(mongoerr.BadValue, "activationProbability must be a number between 0 and 1")
			}
			return failMode{kind: failProbability, p: p}, nil
		}
	}
	return failMode{}, mongoerr.New(mongoerr.BadValue, "mode must be \"off\", \"alwaysOn\", {times: n}, {skip: n} or {activationProbability: p}, not %s", values.Shell(v))
}

// failCommandData is what the failCommand fail point does.
type failCommandData struct {
	commands        []string
	appName         string
	closeConnection bool
	errorCode       mongoerr.Code
	// errorLabels replace the reply's labels when set (nil: not given).
	errorLabels *[]string
	wce         bson.Raw
	block       time.Duration
}

// parseFailCommandData reads the failCommand fail point's data. Without
// failCommands (or without data) the fail point is set and matches no
// command, as MongoDB's, which looks a command up in failCommands only.
func parseFailCommandData(doc bson.Raw) (failCommandData, error) {
	var d failCommandData
	a, err := parseSub(doc, failCommandDataSpec)
	if err != nil {
		return d, err
	}
	if d.commands, err = stringsArg(a.value("failCommands"), "failCommands"); err != nil {
		return d, err
	}
	d.appName, d.closeConnection = a.str("appName"), a.bool("closeConnection")
	if a.has("errorCode") {
		d.errorCode = mongoerr.Code(a.value("errorCode").Int32())
	}
	if a.has("errorLabels") {
		labels, err := stringsArg(a.value("errorLabels"), "errorLabels")
		if err != nil {
			return d, err
		}
		if labels == nil {
			labels = []string{}
		}
		d.errorLabels = &labels
	}
	d.wce = a.doc("writeConcernError")
	if a.bool("blockConnection") {
		ms, _ := values.Int64(a.value("blockTimeMS"))
		if ms <= 0 {
			return d, mongoerr.New(mongoerr.BadValue, "blockConnection needs a positive blockTimeMS")
		}
		d.block = time.Duration(ms) * time.Millisecond
	}
	return d, nil
}

// stringsArg reads an array of strings; none when v is absent.
func stringsArg(v bson.RawValue, name string) ([]string, error) {
	if v.Type == 0 {
		return nil, nil
	}
	vals, _ := v.Array().Values()
	var out []string
	for _, e := range vals {
		str, ok := e.StringValueOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "%s must hold strings", name)
		}
		out = append(out, str)
	}
	return out, nil
}

// failPoint is a fail point's state: its mode, its data and how many
// times it acted. on spares the commands a lock while it is off.
type failPoint[D any] struct {
	on      atomic.Bool
	mu      sync.Mutex
	mode    failMode
	data    D
	entered int64
}

// set changes the mode and data and returns how many times the fail point
// acted before.
func (f *failPoint[D]) set(mode failMode, data D) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode, f.data = mode, data
	f.on.Store(mode.kind != failOff)
	return f.entered
}

// check returns the fail point's data if it acts on a command its data
// matches (nil: any command), counting the time and, in times mode, using
// one up.
func (f *failPoint[D]) check(matches func(D) bool) (D, bool) {
	var none D
	if !f.on.Load() {
		return none, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.data
	if f.mode.kind == failOff || matches != nil && !matches(d) {
		return none, false
	}
	switch f.mode.kind {
	case failTimes:
		if f.mode.n--; f.mode.n <= 0 {
			f.mode.kind = failOff
			f.on.Store(false)
		}
	case failSkip:
		if f.mode.n > 0 {
			f.mode.n--
			return none, false
		}
	case failProbability:
		if rand.Float64() >= f.mode.p {
			return none, false
		}
	}
	f.entered++
	return d, true
}

// failPrimaryWrite applies the onPrimaryTransactionalWrite fail point to
// one statement of a retryable write about to be written. MongoDB
// evaluates it as the session records each write, so statements a retry
// finds executed are not counted, and each document of an insert counts:
// the connection closes without a reply (unless data.closeConnection is
// false), and with data.failBeforeCommitExceptionCode the statement fails
// unapplied.
func (s *Service) failPrimaryWrite(r *Request) error {
	if !r.retryable {
		return nil
	}
	w, ok := s.primaryWrite.check(nil)
	if !ok {
		return nil
	}
	r.CloseConn = r.CloseConn || w.closeConnection
	if w.failBeforeCommit != mongoerr.OK {
		return mongoerr.New(w.failBeforeCommit, "Failing write for %s:%d due to failpoint. The write must not be reflected.",
			sessions.Text(r.Args.Session.lsid), r.Args.Session.txnNumber)
	}
	return nil
}

// applyFailCommand applies the failCommand fail point to r, a command of
// the given names, before it runs: an error fails the command; CloseConn,
// failLabels and failWCE are set for Run and the server.
func (s *Service) applyFailCommand(r *Request, names []string) error {
	d, ok := s.failCommand.check(func(d failCommandData) bool {
		named := slices.ContainsFunc(names, func(n string) bool { return slices.Contains(d.commands, n) })
		return names[0] != "configureFailPoint" && named &&
			(d.appName == "" || r.Conn != nil && r.Conn.AppName == d.appName)
	})
	if !ok {
		return nil
	}
	r.failLabels = d.errorLabels
	if d.closeConnection {
		r.CloseConn = true
		return mongoerr.New(mongoerr.FailCommandClosedConnection, "Failing command due to 'failCommand' failpoint")
	}
	if d.block > 0 {
		err := s.ops.holdDeadline(r, func(ctx context.Context) error {
			t := time.NewTimer(d.block)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return mongoerr.Interruption(ctx)
			}
		})
		if err != nil {
			return err
		}
	}
	if d.errorCode != mongoerr.OK {
		return mongoerr.New(d.errorCode, "Failing command via 'failCommand' failpoint")
	}
	r.failWCE = d.wce
	return nil
}

// withFailedWriteConcern adds the fail point's writeConcernError to the
// reply of r, command name, and the errorLabels it calls for.
func withFailedWriteConcern(r *Request, name string, reply bson.Raw) bson.Raw {
	fields := bsoncore.AppendDocumentElement(nil, "writeConcernError", r.failWCE)
	code, _ := values.Int64(r.failWCE.Lookup("code"))
	if labels := replyLabels(r, name, nil, mongoerr.OK, mongoerr.Code(code)); len(labels) > 0 {
		start, arr := bsoncore.AppendArrayElementStart(fields, "errorLabels")
		for i, l := range labels {
			arr = bsoncore.AppendStringElement(arr, strconv.Itoa(i), l)
		}
		fields, _ = bsoncore.AppendArrayEnd(arr, start)
	}
	return appendFields(reply, fields)
}
