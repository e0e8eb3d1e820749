package main

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// ancestor is the denormalized copy of a category kept in its descendants.
type ancestor struct {
	ID   bson.ObjectID `bson:"_id"`
	Name string        `bson:"name"`
	Slug string        `bson:"slug"`
}

// category is a node of the hierarchy with its ancestors, root first.
type category struct {
	ID        bson.ObjectID  `bson:"_id"`
	ParentID  *bson.ObjectID `bson:"parent_id"`
	Name      string         `bson:"name"`
	Slug      string         `bson:"slug"`
	Ancestors []ancestor     `bson:"ancestors"`
}

// hierarchy is the categories collection and what the example checks on it.
type hierarchy struct {
	k    *cookbook.Kitchen
	coll *mongo.Collection
}

// add inserts a category under parent (nil for a root) and builds its
// ancestor list.
func (h hierarchy) add(ctx context.Context, name string, parent *bson.ObjectID) bson.ObjectID {
	c := category{ID: bson.NewObjectID(), ParentID: parent, Name: name, Slug: strings.ToLower(name), Ancestors: []ancestor{}}
	_, err := h.coll.InsertOne(ctx, c)
	h.k.OK(err, "insert "+name)
	h.generateAncestors(ctx, c.ID, parent)
	return c.ID
}

// generateAncestors walks up from parent and stores the chain in id's
// ancestors.
func (h hierarchy) generateAncestors(ctx context.Context, id bson.ObjectID, parent *bson.ObjectID) {
	list := []ancestor{}
	for parent != nil {
		var p category
		if !h.k.OK(h.coll.FindOne(ctx, bson.M{"_id": *parent}).Decode(&p), "find parent") {
			return
		}
		list = append([]ancestor{{ID: p.ID, Name: p.Name, Slug: p.Slug}}, list...)
		parent = p.ParentID
	}
	_, err := h.coll.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$set": bson.M{"ancestors": list}})
	h.k.OK(err, "set ancestors")
}

// path returns the ancestor names of id joined by " > ".
func (h hierarchy) path(ctx context.Context, id bson.ObjectID) string {
	var c category
	if !h.k.OK(h.coll.FindOne(ctx, bson.M{"_id": id}).Decode(&c), "find category") {
		return ""
	}
	var names []string
	for _, a := range c.Ancestors {
		names = append(names, a.Name)
	}
	return strings.Join(names, " > ")
}

func ancestorLists(ctx context.Context, k *cookbook.Kitchen) {
	h := hierarchy{k: k, coll: k.DB.Collection("categories")}
	k.Step("ancestor lists: every category keeps a copy of its ancestors")
	_, err := h.coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "ancestors._id", Value: 1}}})
	k.OK(err, "createIndex {ancestors._id: 1}")
	home := h.add(ctx, "Home", nil)
	outdoors := h.add(ctx, "Outdoors", &home)
	tools := h.add(ctx, "Tools", &outdoors)
	seedlings := h.add(ctx, "Seedlings", &outdoors)
	planters := h.add(ctx, "Planters", &seedlings)
	gardening := h.add(ctx, "Gardening", &home)
	k.Check(h.path(ctx, planters) == "Home > Outdoors > Seedlings", "Planters sits under Home > Outdoors > Seedlings (got %q)", h.path(ctx, planters))

	k.Step("move Outdoors under Gardening: set its parent, rebuild every list that contains it")
	_, err = h.coll.UpdateOne(ctx, bson.M{"_id": outdoors}, bson.M{"$set": bson.M{"parent_id": gardening}})
	k.OK(err, "set parent_id")
	h.generateAncestors(ctx, outdoors, &gardening)
	descendants := bson.M{"ancestors._id": outdoors}
	cur, err := h.coll.Find(ctx, descendants)
	var moved []category
	if k.OK(err, "find descendants") && k.OK(cur.All(ctx, &moved), "read descendants") {
		k.Check(len(moved) == 3, "Outdoors has 3 descendants to rebuild (got %d)", len(moved))
		for _, c := range moved {
			h.generateAncestors(ctx, c.ID, c.ParentID)
		}
	}
	k.UsesIndex(ctx, h.coll, descendants, nil, "ancestors._id_1")
	k.Check(h.path(ctx, planters) == "Home > Gardening > Outdoors > Seedlings", "Planters now sits under Home > Gardening > Outdoors > Seedlings (got %q)", h.path(ctx, planters))
	k.Check(h.path(ctx, tools) == "Home > Gardening > Outdoors", "Tools now sits under Home > Gardening > Outdoors (got %q)", h.path(ctx, tools))

	k.Step("rename Outdoors: replace it, then 'ancestors.$' rewrites its copy in every descendant (multi)")
	var doc category
	if !k.OK(h.coll.FindOne(ctx, bson.M{"_id": outdoors}).Decode(&doc), "find Outdoors") {
		return
	}
	doc.Name = "The Great Outdoors"
	_, err = h.coll.ReplaceOne(ctx, bson.M{"_id": outdoors}, doc)
	k.OK(err, "replace Outdoors")
	res, err := h.coll.UpdateMany(ctx, descendants,
		bson.M{"$set": bson.M{"ancestors.$": ancestor{ID: doc.ID, Name: doc.Name, Slug: doc.Slug}}})
	if k.OK(err, "positional update of ancestors") {
		k.Check(res.MatchedCount == 3 && res.ModifiedCount == 3, "3 descendants matched and modified (got %d, %d)", res.MatchedCount, res.ModifiedCount)
	}
	k.Check(h.path(ctx, planters) == "Home > Gardening > The Great Outdoors > Seedlings", "Planters shows the new name (got %q)", h.path(ctx, planters))
	k.Check(h.path(ctx, seedlings) == "Home > Gardening > The Great Outdoors", "Seedlings shows the new name (got %q)", h.path(ctx, seedlings))
}
