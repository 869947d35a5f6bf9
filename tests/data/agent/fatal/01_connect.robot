*** Test Cases ***
Starts The Server
    No Operation

Check 1
    Should Be Equal As Integers    1    2

Check 2
    Should Be Equal As Integers    2    3

Check 3
    Should Be Equal As Integers    3    4

Check 4
    Should Be Equal As Integers    4    5

Check 5
    Should Be Equal As Integers    5    6

Check 6
    Should Be Equal As Integers    6    7

Check 7
    Should Be Equal As Integers    7    8

Check 8
    Should Be Equal As Integers    8    9

Check 9
    Should Be Equal As Integers    9    10

Check 10
    Should Be Equal As Integers    10    11

Check 11
    Should Be Equal As Integers    11    12

Check 12
    Should Be Equal As Integers    12    13

Check 13
    Should Be Equal As Integers    13    14

Check 14
    Should Be Equal As Integers    14    15

Check 15
    Should Be Equal As Integers    15    16

Check 16
    Should Be Equal As Integers    16    17

Check 17
    Should Be Equal As Integers    17    18

Check 18
    Should Be Equal As Integers    18    19

Check 19
    Should Be Equal As Integers    19    20

Check 20
    Should Be Equal As Integers    20    21

Check 21
    Should Be Equal As Integers    21    22

Check 22
    Should Be Equal As Integers    22    23

Check 23
    Should Be Equal As Integers    23    24

Check 24
    Should Be Equal As Integers    24    25

Check 25
    Should Be Equal As Integers    25    26

Check 26
    Should Be Equal As Integers    26    27

Check 27
    Should Be Equal As Integers    27    28

Check 28
    Should Be Equal As Integers    28    29

Check 29
    Should Be Equal As Integers    29    30

Check 30
    Should Be Equal As Integers    30    31

Connects
    Open Session    api.example

*** Keywords ***
Open Session
    [Arguments]    ${host}
    Log    resolving ${host}
    Fatal Error    cannot reach ${host}: name or service not known
