*** Test Cases ***
Bodies Differ In One Field
    # two JSON bodies of ~3,900 characters each: only item 31's state differs
    ${expected} =    Evaluate    json.dumps({"items": [{"id": i, "state": "open", "owner": f"team-{i}"} for i in range(60)]})    json
    ${actual} =    Evaluate    json.dumps({"items": [{"id": i, "state": "closed" if i == 31 else "open", "owner": f"team-{i}"} for i in range(60)]})    json
    Should Be Equal As Strings    ${actual}    ${expected}    msg=order list
