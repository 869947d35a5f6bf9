*** Test Cases ***
Reads Orders
    No Operation

Writes Orders
    No Operation

Deletes Orders
    No Operation
