package engine

import "go.mongodb.org/mongo-driver/v2/bson"

// unionSource reads the scans of an index union (MongoDB's OR stage) one
// after the other. They share one set of the documents seen (by encoded
// _id), so each document comes once whatever scans hold it.
type unionSource struct {
	srcs   []*planSource
	i      int
	closer func() error
}

func (u *unionSource) Next() (bson.Raw, error) {
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

func (u *unionSource) Close() error {
	var err error
	for _, s := range u.srcs {
		err = firstErr(err, s.Close())
	}
	if u.closer != nil {
		err = firstErr(err, u.closer())
	}
	return err
}
