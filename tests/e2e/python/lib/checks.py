"""Checks the pymongo end-to-end scripts share."""


def eq(actual, expected, msg):
    """Fails the script unless actual equals expected."""
    if actual != expected:
        raise AssertionError("%s: got %r, want %r" % (msg, actual, expected))


def ixscan(coll, filter, sort, index):
    """Fails the script unless the find's winning plan scans index (the
    plan's stage name is compared when it scans none)."""
    cmd = {"find": coll.name, "filter": filter}
    if sort:
        cmd["sort"] = sort
    plan = coll.database.command({"explain": cmd, "verbosity": "queryPlanner"})["queryPlanner"]["winningPlan"]
    stage = plan
    while stage and stage.get("stage") != "IXSCAN":
        stage = stage.get("inputStage")
    eq(stage["indexName"] if stage else plan["stage"], index, "explain %s %r" % (coll.name, filter))
