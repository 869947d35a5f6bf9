*** Variables ***
${NIGHT}          1

*** Test Cases ***
Order Is Stored
    Log    stored

Order Total Adds Up
    Should Be Equal As Integers    ${NIGHT}    1    total off on night ${NIGHT}
