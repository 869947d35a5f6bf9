*** Test Cases ***
Typo
    Lgo    a typo, not an import
