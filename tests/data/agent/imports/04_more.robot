*** Settings ***
Variables    broken_vars.py
Library      libs/NoSuchLib.py
Library      no.such.Module    AS    Short

*** Test Cases ***
Variable From A Broken File
    Log    ${VAULT_URL}

Library By Path
    NoSuchLib.Do It

Aliased Library
    Short.Run
