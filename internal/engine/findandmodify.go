package engine

import (
	"errors"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/update"
)

// FindAndModifySpec is a findAndModify command: the first document matching
// Filter in Sort order is updated (or removed), and returned as it was
// before (or, with New, after), shaped by Fields.
type FindAndModifySpec struct {
	Filter       bson.Raw
	Sort         bson.Raw
	Update       bson.Raw
	Pipeline     bool // Update holds an update pipeline
	Fields       bson.Raw
	ArrayFilters []bson.Raw
	Hint         bson.RawValue
	WriteOptions
	Remove bool
	New    bool
	Upsert bool
}

// FindAndModifyResult is what findAndModify reports: Value is nil when no
// document is returned; N and UpdatedExisting form lastErrorObject.
type FindAndModifyResult struct {
	Value           bson.Raw
	N               int64
	UpdatedExisting bool
	UpsertedID      bson.RawValue
	// Modified reports whether the update changed the document found.
	Modified bool
}

// FindAndModify claims one document atomically: candidates are taken in sort
// order and each is re-checked under its lock, so concurrent callers never
// receive the same document.
func (e *Engine) FindAndModify(db, coll string, s FindAndModifySpec) (FindAndModifyResult, error) {
	f, err := e.writeFilter(s.Txn, db, coll, s.Filter, s.WriteOptions, s.Upsert)
	if err != nil {
		return FindAndModifyResult{}, err
	}
	var upd updater
	if !s.Remove {
		if upd, err = compileUpdate(s.Update, s.ArrayFilters, s.Pipeline, coll, s.Let, f.Collator(), s.Clock); err != nil {
			return FindAndModifyResult{}, err
		}
	}
	proj, err := s.projection(f)
	if err != nil {
		return FindAndModifyResult{}, err
	}
	if len(s.Sort) > 0 {
		err := checkNaturalSort(s.Sort, s.Hint)
		var srt *query.Sort
		if err == nil {
			srt, err = query.CompileSort(s.Sort)
		}
		if err == nil {
			err = checkSortMeta(f, srt)
		}
		if err != nil {
			return FindAndModifyResult{}, err
		}
	}
	if err := e.userWritable(db, coll); err != nil {
		return FindAndModifyResult{}, err
	}
	c, err := e.writable(s.Ctx, s.Txn, db, coll, s.Upsert, cappedInTxn)
	if err != nil || c == nil {
		return FindAndModifyResult{}, err
	}
	defer c.mu.RUnlock()
	if idHackWrite(c, f, s.Hint, s.Fields, positional(upd)) {
		opStatsIn(s.Ctx).noteUnplanned()
	}
	var res FindAndModifyResult
	for attempt := 1; ; attempt++ {
		res, err = e.claimFirst(c, s, f, upd, proj)
		if err != nil || res.N > 0 || !s.Upsert {
			break
		}
		res, err = e.findAndModifyUpsert(c, s, upd, proj)
		if !mongoerr.Is(err, mongoerr.DuplicateKey) || attempt == maxUpsertAttempts {
			break
		}
	}
	if _, ok := errors.AsType[*mongoerr.Error](err); ok {
		// what the plan's execution raised (a match, the update, the
		// write), as MongoDB's findAndModify reports it
		return res, mongoerr.AddContext(err, "Plan executor error during findAndModify")
	}
	if err == nil && res.N > 0 && s.Txn == nil {
		err = e.ackDurable(s.WriteOptions)
	}
	return res, err
}

func (e *Engine) claimFirst(c *Collection, s FindAndModifySpec, f *query.Filter, upd updater, proj *query.Projection) (FindAndModifyResult, error) {
	if err := bindFilterText(c, f); err != nil {
		return FindAndModifyResult{}, err
	}
	cur, err := e.Find(c.DB, c.Name, FindOptions{Filter: s.Filter, Sort: s.Sort, Hint: s.Hint, Txn: s.Txn, Ctx: s.Ctx, Let: s.Let, Collation: s.Collation})
	if err != nil {
		return FindAndModifyResult{}, err
	}
	defer cur.Close()
	var res FindAndModifyResult
	for res.N == 0 {
		cand, err := cur.Next()
		if cand == nil || err != nil {
			return res, err
		}
		meta := docsrc.MetaOf(cur)
		key, err := c.recordKey(cand)
		if err != nil {
			return res, err
		}
		var out bson.Raw
		var outPos int
		claimed, _, err := e.rewrite(s.Ctx, c, key, f, s.Txn, s.Record, nil, func(old bson.Raw, pos int) (bson.Raw, change, error) {
			out, outPos = old, pos
			if s.Remove {
				return nil, removed, nil
			}
			next, delta, modified, err := upd.Apply(old, pos, false)
			if err == nil && modified {
				err = checkUpdatedDepth(next)
			}
			if err != nil {
				return nil, kept, err
			}
			if s.New {
				out = next
			}
			if !modified {
				return nil, kept, nil
			}
			res.Modified = true
			if err := e.validate(c, old, next, s.BypassValidation); err != nil {
				return nil, kept, err
			}
			if err := c.checkShardKeyUpdate(old, next, f, false, s.Txn != nil || s.Record != nil); err != nil {
				return nil, kept, err
			}
			return next, changeOf(upd, delta), nil
		})
		if err != nil {
			return res, err
		}
		if claimed {
			res.N = 1
			res.UpdatedExisting = !s.Remove
			if res.Value, err = project(proj, out, outPos, meta); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// checkSortMeta refuses a sort reading metadata the filter f cannot give
// (40218): the $geoNear distance without a $near, the text score without
// $text. MongoDB's findAndModify meets it as it canonicalizes its query
// (ParsedUpdate::parseQueryToCQ, ParsedDelete), before any plan runs, so
// the error is not one of the plan executor's.
func checkSortMeta(f *query.Filter, srt *query.Sort) error {
	if err := checkGeoNearMeta(compiledFind{filter: f, sort: srt}); err != nil {
		return err
	}
	if srt.NeedsTextScore() {
		if ts, err := f.Text(); err == nil && ts == nil {
			return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
		}
	}
	return nil
}

// projection compiles s's fields (nil when none) as MongoDB's
// getExecutorUpdate and getExecutorDelete accept them.
func (s FindAndModifySpec) projection(f *query.Filter) (*query.Projection, error) {
	if len(s.Fields) == 0 {
		return nil, nil
	}
	proj, err := query.CompileProjectionLet(s.Fields, s.Let, f.Collator())
	if err != nil {
		return nil, err
	}
	// The text score of the document found, as a find projects it
	// (fts_find_and_modify.js); 40218 without $text, as MongoDB's
	// canonical query refuses it.
	for _, name := range proj.MetaNames() {
		if name == "sortKey" {
			return nil, mongoerr.New(mongoerr.BadValue, "Cannot use a $meta sortKey projection in findAndModify commands.")
		}
		if name != "textScore" {
			return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support {$meta: %q} in a findAndModify projection yet", name)
		}
		if ts, err := f.Text(); err == nil && ts == nil {
			return nil, mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
		}
		if s.Upsert {
			return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support $meta in the projection of a findAndModify upsert yet")
		}
	}
	// the query's match details need not hold for the updated document
	if proj.Positional() && s.New && !s.Remove {
		return nil, mongoerr.New(mongoerr.BadValue, "cannot use a positional projection and return the new document")
	}
	return proj, nil
}

func (e *Engine) findAndModifyUpsert(c *Collection, s FindAndModifySpec, upd updater, proj *query.Projection) (FindAndModifyResult, error) {
	seed, err := update.UpsertSeed(s.Filter, isReplacement(upd))
	if err != nil {
		return FindAndModifyResult{}, err
	}
	doc, _, _, err := upd.Apply(seed, -1, true)
	if err == nil {
		err = checkUpserted(doc)
	}
	if err == nil {
		err = checkUpsertSize(doc)
	}
	if err != nil {
		return FindAndModifyResult{}, err
	}
	doc, _, err = prepareInsert(doc)
	if err != nil {
		return FindAndModifyResult{}, err
	}
	id, err := e.insertOne(s.Ctx, c, doc, s.Txn, stmtRec{rec: s.Record}, s.BypassValidation)
	if err != nil {
		return FindAndModifyResult{}, err
	}
	res := FindAndModifyResult{N: 1, UpsertedID: id}
	if s.New {
		res.Value, err = project(proj, doc, -1, docsrc.Meta{})
	}
	return res, err
}

// project projects doc, found with meta, by p (nil: none).
func project(p *query.Projection, doc bson.Raw, pos int, meta docsrc.Meta) (bson.Raw, error) {
	if p == nil {
		return doc, nil
	}
	return p.ApplyMeta(doc, pos, meta)
}
