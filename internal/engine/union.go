package engine

import "go.mongodb.org/mongo-driver/v2/bson"

// unionSource reads the scans of an index union (MongoDB's OR stage) one
// after the other. They share one set of the documents seen (by encoded
// _id), so each document comes once whatever scans hold it. A $text
// branch's search (text) is read before them, and gives its documents
// their scores.
type unionSource struct {
	srcs []*planSource
	i    int
	// text is the $text branch's search; textDone reports that it has
	// given all its documents.
	text     *textSource
	textDone bool
	closer   func() error
	// replay holds the documents a trial's winner returned during its
	// trial (trialDoc.src names the scan of each), which Next returns
	// first; resume is then the scan the union was reading.
	replay []trialDoc
	resume int
}

func (u *unionSource) Next() (bson.Raw, error) {
	if u.replay != nil {
		if len(u.replay) > 0 {
			// The scan that found it serves its metadata (Meta).
			u.i = u.replay[0].src
			s := u.srcs[u.i]
			s.replay = u.replay[:1]
			u.replay = u.replay[1:]
			return s.replayNext(), nil
		}
		u.i, u.replay = u.resume, nil
	}
	if u.text != nil && !u.textDone {
		doc, err := u.text.Next()
		if doc != nil || err != nil {
			return doc, err
		}
		u.textDone = true
	}
	for u.i < len(u.srcs) {
		doc, err := u.srcs[u.i].Next()
		if doc != nil || err != nil {
			return doc, err
		}
		u.i++
	}
	return nil, nil
}

// park parks each scan of the union (see planSource.park).
func (u *unionSource) park() bool {
	parked := false
	for _, s := range u.srcs {
		parked = s.park() || parked
	}
	return parked
}

// recheckLatest rechecks a document of the $text branch as its search
// does (textSource.recheckLatest), any other by the plain recheck.
func (u *unionSource) recheckLatest(r *recheck, doc bson.Raw) (bson.Raw, error) {
	if u.text != nil && !u.textDone {
		return u.text.recheckLatest(r, doc)
	}
	return r.latest(doc)
}

func (u *unionSource) Close() error {
	var err error
	if u.text != nil {
		err = u.text.Close()
	}
	for _, s := range u.srcs {
		err = firstErr(err, s.Close())
	}
	if u.closer != nil {
		err = firstErr(err, u.closer())
	}
	return err
}
