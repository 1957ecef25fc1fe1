def test_l2_and_l3_tools_are_listed_with_their_roles(agent_api):
    status, catalog = agent_api.get("/api/v1/tools")
    assert status == 200
    roles = {t["name"]: t["roles"] for t in catalog}
    assert roles["read_scene_blocks"] == ["agent", "worker", "admin"]
    for name in ("read_l1_increment", "l2_commit", "l2_archive_guide", "l3_edit", "l3_commit"):
        assert roles[name] == ["worker", "admin"], name
    l2 = next(t for t in catalog if t["name"] == "l2_commit")
    assert set(l2["parameters"]["required"]) == {"sceneWrites", "cursor"}
