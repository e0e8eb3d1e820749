// Command tworefs shows two-way referencing: a person lists the ids of their
// tasks and every task names its owner, so both directions are one indexed
// query; the price is that reassigning a task takes three updates that are
// not atomic together.
package main

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("tworefs", run) }

// person lists the tasks they own.
type person struct {
	ID    bson.ObjectID   `bson:"_id"`
	Name  string          `bson:"name"`
	Tasks []bson.ObjectID `bson:"tasks"`
}

// task names its owner.
type task struct {
	ID          bson.ObjectID `bson:"_id"`
	Description string        `bson:"description"`
	Owner       bson.ObjectID `bson:"owner"`
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	people, tasks := k.DB.Collection("people"), k.DB.Collection("tasks")
	kate := person{ID: bson.NewObjectID(), Name: "Kate Monster"}
	joe := person{ID: bson.NewObjectID(), Name: "Joe Bloggs"}
	var all []any
	for i, d := range []string{"Write lesson plan", "Grade homework", "Order books"} {
		t := task{ID: bson.NewObjectID(), Description: d, Owner: kate.ID}
		if i == 2 {
			t.Owner = joe.ID
			joe.Tasks = append(joe.Tasks, t.ID)
		} else {
			kate.Tasks = append(kate.Tasks, t.ID)
		}
		all = append(all, t)
	}
	lesson := all[0].(task)

	k.Step("people reference their tasks, tasks reference their owner")
	_, err := tasks.InsertMany(ctx, all)
	k.OK(err, "insert tasks")
	_, err = people.InsertMany(ctx, []any{kate, joe})
	k.OK(err, "insert people")
	_, err = tasks.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "owner", Value: 1}}})
	k.OK(err, "createIndex {owner: 1}")
	_, err = people.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "tasks", Value: 1}}})
	k.OK(err, "createIndex {tasks: 1}")

	k.Step("both directions are one query")
	k.Check(owner(ctx, k, people, lesson.ID) == "Kate Monster", "the lesson plan belongs to Kate")
	k.Check(countTasks(ctx, k, tasks, kate.ID) == 2, "Kate owns 2 tasks by the owner field")
	k.UsesIndex(ctx, tasks, bson.M{"owner": kate.ID}, nil, "owner_1")
	k.UsesIndex(ctx, people, bson.M{"tasks": lesson.ID}, nil, "tasks_1")

	k.Step("reassign the lesson plan to Joe: three updates, both sides")
	_, err = people.UpdateOne(ctx, bson.M{"_id": kate.ID}, bson.M{"$pull": bson.M{"tasks": lesson.ID}})
	k.OK(err, "pull from Kate")
	_, err = people.UpdateOne(ctx, bson.M{"_id": joe.ID}, bson.M{"$addToSet": bson.M{"tasks": lesson.ID}})
	k.OK(err, "add to Joe")
	_, err = tasks.UpdateOne(ctx, bson.M{"_id": lesson.ID}, bson.M{"$set": bson.M{"owner": joe.ID}})
	k.OK(err, "set owner")
	k.Check(owner(ctx, k, people, lesson.ID) == "Joe Bloggs", "the people side says Joe")
	k.Check(countTasks(ctx, k, tasks, joe.ID) == 2 && countTasks(ctx, k, tasks, kate.ID) == 1, "the task side says Joe has 2, Kate 1")
	var j person
	if k.OK(people.FindOne(ctx, bson.M{"_id": joe.ID}, options.FindOne().SetProjection(bson.M{"tasks": 1})).Decode(&j), "find Joe") {
		k.Check(len(j.Tasks) == 2 && slices.Contains(j.Tasks, lesson.ID), "Joe's list holds the lesson plan (got %v)", j.Tasks)
	}
}

// owner returns the name of the person whose task list holds id.
func owner(ctx context.Context, k *cookbook.Kitchen, people *mongo.Collection, id bson.ObjectID) string {
	var p person
	k.OK(people.FindOne(ctx, bson.M{"tasks": id}).Decode(&p), "find owner")
	return p.Name
}

// countTasks counts the tasks whose owner is id.
func countTasks(ctx context.Context, k *cookbook.Kitchen, tasks *mongo.Collection, id bson.ObjectID) int64 {
	n, err := tasks.CountDocuments(ctx, bson.M{"owner": id})
	k.OK(err, "count tasks")
	return n
}
