*** Settings ***
Documentation     Secrets logged in many shapes, loops with one failing iteration, and texts
...               that plain-text search must find literally (%, _, CJK, non-ASCII case).

*** Variables ***
${PASSWORD}       hunter2-Secret!
${TOKEN}          tok_9f8e7d6c5b4a
${JWT}            eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz

*** Test Cases ***
Secrets In Many Shapes
    Log    password=${PASSWORD} user=bob
    Log    Authorization: Bearer ${JWT}
    Log    {"user": "bob", "api_key": "AKfake123456", "token_count": 5}
    Log    Connecting to https://admin:${PASSWORD}@db.example.com:5432/app
    Log    Cookie: session=abc123def; theme=dark
    Log    -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----
    Log    POST /oauth client_secret=cs-777&grant_type=password
    ${api_token}=    Set Variable    ${TOKEN}
    VAR    ${db_password}    s3cr3t-Value
    Set Test Variable    ${SESSION_SECRET}    xyz-987-secret
    Input Password    id:pw    ${PASSWORD}
    Log    token_count=5 and status passed, tokens used: 42
    Fail    Login failed for bob with password=${PASSWORD}

Data Driven Logins
    FOR    ${user}    ${password}    IN    alice    pw-alice-1    bob    pw-bob-2
        Log    checking ${user}
    END

Nested Loops With One Failing Iteration
    FOR    ${row}    IN RANGE    3
        FOR    ${col}    IN RANGE    3
            Log    cell ${row}/${col}
            IF    ${row} == 1 and ${col} == 2
                Log    about to fail in cell ${row}/${col}    WARN
                Run Keyword And Continue On Failure    Fail    bad cell ${row}/${col}
            END
        END
    END

Literal Text
    Log    discount 50% off_peak for user_1 \\ back
    Log    登录失败: 用户不存在
    Log    Ärger im Büro
    Log    OK
    Log    ${{"x" * 1000 + "password=LongSecretValue123" + " " * 10 + "needle-in-haystack" + "y" * 1000}}

*** Keywords ***
Input Password
    [Arguments]    ${locator}    ${text}
    Log    Typing into ${locator}
