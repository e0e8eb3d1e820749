package instance

import (
	"bytes"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
)

// The advisor's observations are kept in admin.system.advise, one document
// per frontend ({_id: its frontend id, "local" for a lone server,
// observations}), saved every adviseSaveEvery when they changed and at
// shutdown, loaded at startup.
const adviseSaveEvery = time.Minute

// adviseKey is the filter of this server's document in admin.system.advise.
func (in *Instance) adviseKey() bson.Raw {
	id := in.frontendID
	if id == "" {
		id = engine.DefaultFrontendID
	}
	key, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
	return key
}

// loadAdvice loads the saved observations, if any.
func (in *Instance) loadAdvice() error {
	if in.eng.Collection("admin", engine.AdviseCollection) == nil {
		return nil
	}
	cur, err := in.eng.Find("admin", engine.AdviseCollection, engine.FindOptions{Filter: in.adviseKey()})
	if err != nil {
		return err
	}
	defer cur.Close()
	doc, err := cur.Next()
	if err != nil || doc == nil {
		return err
	}
	obs, ok := doc.Lookup("observations").DocumentOK()
	if !ok {
		return nil
	}
	return in.svc.Advisor.Load(obs)
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
	key := in.adviseKey()
	doc, err := bson.Marshal(bson.D{{Key: "_id", Value: key.Lookup("_id")}, {Key: "observations", Value: obs}})
	if err != nil {
		return err
	}
	if _, err = in.eng.Update("admin", engine.AdviseCollection, engine.UpdateSpec{Filter: key, Update: doc, Upsert: true}); err == nil {
		in.savedAdvice = obs
	}
	return err
}
