package instance

import (
	"bytes"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
)

// The advisor's observations are kept in local.system.advise, one document
// per frontend ({_id: its frontend id, "local" for a lone server,
// observations}), saved every adviseSaveEvery when they changed and at
// shutdown, loaded at startup. Like MongoDB's local.system.* collections,
// the server alone writes it (engine.PutOwn), the oplog does not log it and
// mongodump leaves it out.
const adviseSaveEvery = time.Minute

// adviseKey is the filter of this server's document in local.system.advise.
func (in *Instance) adviseKey() bson.Raw {
	id := in.frontendID
	if id == "" {
		id = engine.DefaultFrontendID
	}
	key, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
	return key
}

// loadAdvice loads the saved observations, if any, first moving those an
// older build kept in admin.system.advise (moveLegacyAdvice) when the
// server may write; until they are moved they are read where they are.
func (in *Instance) loadAdvice() error {
	var moveErr error
	if in.svc.Writable() {
		moveErr = in.moveLegacyAdvice()
	}
	for _, db := range []string{engine.AdviseDB, engine.LegacyAdviseDB} {
		doc, err := in.adviceDoc(db, in.adviseKey())
		if err != nil {
			return errors.Join(moveErr, err)
		}
		if doc != nil {
			if obs, ok := doc.Lookup("observations").DocumentOK(); ok {
				err = in.svc.Advisor.Load(obs)
			}
			return errors.Join(moveErr, err)
		}
	}
	return moveErr
}

// adviceDoc returns the document of db.system.advise that filter
// matches, nil when there is none.
func (in *Instance) adviceDoc(db string, filter bson.Raw) (bson.Raw, error) {
	if in.eng.Collection(db, engine.AdviseCollection) == nil {
		return nil, nil
	}
	cur, err := in.eng.Find(db, engine.AdviseCollection, engine.FindOptions{Filter: filter})
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	doc, err := cur.Next()
	return bytes.Clone(doc), err
}

// moveLegacyAdvice copies each frontend's document of admin.system.advise,
// where builds before local.system.advise kept the observations, to
// local.system.advise unless that frontend has one there already, then
// drops admin.system.advise (unlogged, as its writes were).
func (in *Instance) moveLegacyAdvice() error {
	if in.eng.Collection(engine.LegacyAdviseDB, engine.AdviseCollection) == nil {
		return nil
	}
	cur, err := in.eng.Find(engine.LegacyAdviseDB, engine.AdviseCollection, engine.FindOptions{})
	if err != nil {
		return err
	}
	var docs []bson.Raw
	for {
		doc, err := cur.Next()
		if err != nil || doc == nil {
			cur.Close()
			if err != nil {
				return err
			}
			break
		}
		docs = append(docs, bytes.Clone(doc))
	}
	for _, doc := range docs {
		key, err := bson.Marshal(bson.D{{Key: "_id", Value: doc.Lookup("_id")}})
		if err != nil {
			return err
		}
		there, err := in.adviceDoc(engine.AdviseDB, key)
		if err == nil && there == nil {
			err = in.eng.PutOwn(engine.AdviseDB, engine.AdviseCollection, doc)
		}
		if err != nil {
			return err
		}
	}
	_, err = in.eng.DropCollection(engine.LegacyAdviseDB, engine.AdviseCollection)
	return err
}

// saveAdvice saves the observations, unless they did not change since the
// last save.
func (in *Instance) saveAdvice() error {
	if !in.svc.Writable() {
		return nil // kept for the next save
	}
	in.adviceMu.Lock()
	defer in.adviceMu.Unlock()
	obs, err := in.svc.Advisor.Save()
	if err != nil || bytes.Equal(obs, in.savedAdvice) {
		return err
	}
	doc, err := bson.Marshal(bson.D{{Key: "_id", Value: in.adviseKey().Lookup("_id")}, {Key: "observations", Value: obs}})
	if err != nil {
		return err
	}
	if err = in.eng.PutOwn(engine.AdviseDB, engine.AdviseCollection, doc); err == nil {
		in.savedAdvice = obs
	}
	return err
}
