*** Test Cases ***
Quick Check
    Log    quick
Long Soak
    Log    soaking
    Sleep    ${SOAK}
After The Soak
    Fail    found after the soak

*** Variables ***
${SOAK}           3s
