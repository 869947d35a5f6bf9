*** Settings ***
Documentation     Secrets handled the ordinary way, each a value of its own (S01 ... S144), and
...               values that only look like secrets (L01 ... L94), which must stay readable.
Library           Vault.py
Library           SSHLibrary.py
Library           Browser.py
Library           OperatingSystem
Library           Process
Library           Collections
Library           DatabaseLibrary.py
Metadata          Contact    ops team
Metadata          Deploy Token    S93-metadata-Tk
Metadata          Token Count    L40-meta-count

*** Variables ***
${PASSWORD}            S01-Hunter2-pass
${DEEP_PASSWORD}       S03-deep-Pw-9
${DB_PASSWORD}         S11-db-Pw-rt5
${API_SECRET}          S12-apisecret-44
${ACTUAL_TOKEN}        S20-actual-Tk8
&{CREDS}               user=bob    password=S22-dict-Pw3
${token_count}         L01-54321-count
${passed}              L02-all-tests-passed
${bypass_cache}        L03-bypass-enabled
${tokenizer}           L04-whitespace-tokenizer
${password_hint}       L05-ask-the-admin
${secret_enabled}      L06-feature-flag-on
${pwd}                 L7x
${password2}           True
${session_token}       None
${api_key}             1234
${sessions}            L11-sessions-open-3
${authors}             L12-jane-and-john
${DB_PASS}             S33-db-pass-Qw7
${API_PW}              S34-api-pw-Rt2
${service_value}       S36-env-ref-Tk
${typed_value}         S39-typed-ref-Pw
${SMTP_PASSWORD}       S92-log-many-Pw

*** Test Cases ***
Prose Interpolation
    [Documentation]    Logs in as alice (doc mentions ${PASSWORD}).
    Log    login failed for alice with password ${PASSWORD} after 3 attempts
    Log    ${token_count} tokens, ${passed}, ${bypass_cache}, ${tokenizer}, ${password_hint}
    Log    ${secret_enabled}, ${pwd}, ${password2}, ${session_token}, ${api_key}, ${sessions}, ${authors}

Passed On Under Other Names
    Login With    alice    ${PASSWORD}
    Outer Level    ${DEEP_PASSWORD}

Failure Message Names The Password
    Run Keyword And Continue On Failure    Fail    login rejected: ${PASSWORD}
    Run Keyword And Continue On Failure    Nested Failure    ${DB_PASSWORD}
    Run Keyword And Continue On Failure    Should Be Equal    ${ACTUAL_TOKEN}    expected-token
    Log    done

Values Assigned And Produced
    ${secret} =    Set Variable    S05-set-var-Sec
    ${token} =    Get Token From Vault
    VAR    ${private_key}    S07-var-pk-1234
    Set Test Variable    ${API_TOKEN}    S08-test-var-Tok
    Log    using ${secret} and ${token} and ${private_key} and ${API_TOKEN} here
    Echo    ${token}

Loop Values
    FOR    ${user}    ${password}    IN    alice    S09-loop-pw-a    bob    S09-loop-pw-b
        Log    checking ${user} with ${password}
    END

Bodies And Urls
    Log    {"db": "${DB_PASSWORD}", "user": "app"}
    Log    GET https://api.example.com/v1/${API_SECRET}/items
    Log    prefix${PASSWORD}suffix
    Log    ${CREDS}[password] is the dict's

Shapes Next To Their Name
    Log    password=S14-kv-pw-77 user=bob
    Log    the value was S14-kv-pw-77 all along
    Log    Authorization: Bearer S15-bearer-tok-9q
    Log    token S15-bearer-tok-9q expired
    Log    connecting https://admin:S16-url-pw-5@db.example.com/app
    Log    retrying with S16-url-pw-5
    Vault.Login    bob    password=S17-named-Pw
    Input Password    id:pw    S18-input-pw-x
    Log    typed S18-input-pw-x into the field
    Echo    ${PASSWORD}
    Log    warn about ${API_SECRET}    WARN
    Log    <soap:Envelope><Login><user>bob</user><ns:Password>S25-xml-Pw-61</ns:Password></Login></soap:Envelope>
    Log    login refused for S25-xml-Pw-61
    Log    running curl -s -u deploy:S26-curl-Pw-8 https://ci.example/api
    Log    deploy key S26-curl-Pw-8 rejected
    Log    posting to https://hooks.slack.com/services/T01ABC/B02DEF/S27webhooksecret99
    Log    login failed for bob with password S28-prose-Pw9.
    Log    S28-prose-Pw9 was rejected
    Log    the password policy L13-pw-policy-v2 applies
    Log    running sshpass -p S29-ssh-Pw-3 scp build.tgz deploy@host:/srv
    Log    host key for S29-ssh-Pw-3 accepted
    Log    Typing text 'S30-typed-Pw4' into text field 'id=password'.
    Log    S30-typed-Pw4 was typed
    Log    running mysql -u app -p L14-appdb-name < seed.sql
    Log    Typing text 'L15-user-name' into text field 'id=username'.
    SSHLibrary.Login    deploy    S31-ssh-Login-Pw
    Log    S31-ssh-Login-Pw is the build host's
    Log    Executing : CREATE USER report IDENTIFIED BY 'S32-sql-User-Pw'; GRANT SELECT ON t TO report
    Log    S32-sql-User-Pw expires in 90 days
    Log    the row identified by L16-row-key-7 was updated
    Log    connecting with ${DB_PASS} and ${API_PW}
    Open Sidebar    main    L17-sidebar-entry
    ${state} =    Get Sidebar State
    Log    sidebar is ${state}
    Set Environment Variable    DB_PASSWORD    S35-env-Pw-8
    Set Environment Variable    SERVICE_TOKEN    ${service_value}
    Set Environment Variable    BUILD_LABEL    L19-build-label
    ${from_env} =    Get Environment Variable    DB_PASSWORD
    Log    the job runs with ${from_env}, ${service_value} and %{BUILD_LABEL}
    Set To Dictionary    ${CREDS}    api_token    S37-dict-set-Tk
    ${copied} =    Get From Dictionary    ${CREDS}    api_token
    Log Many    password    L20-after-the-word
    Fill Text    css=input#login-password    S38-filled-Pw-5
    Type Text    id=otp    ${typed_value}
    Fill Text    id=username    L21-filled-user
    Log    signed in after S38-filled-Pw-5 and ${typed_value} were typed
    Log    executing ALTER USER report PASSWORD 'SfortyfiveQuoted'
    Log    SfortyfiveQuoted was rotated
    Log    Executing command 'echo S46-sudo-Pw | sudo -S systemctl restart app'.
    Log    sudo accepted S46-sudo-Pw
    Log    running openssl pkcs12 -export -passout pass:S47-p12-Pw -out cert.p12
    Log    S47-p12-Pw protects cert.p12
    Log    cloning https://x-access-token:S48-clone-Tk@github.com/acme/L23-clone-repo failed
    Log    S48-clone-Tk expired
    Log    Starting process:\nredis-cli -h cache -a S49-redis-Pw --scan
    Log    S49-redis-Pw was rejected
    Log    Executing command 'sqlcmd -S db -U sa -P S50-sqlcmd-Pw -Q "SELECT 1"'.
    Log    S50-sqlcmd-Pw expires soon
    Log    keytool -importcert -keystore ks.jks -storepass S51-store-Pw -alias ca
    Log    S51-store-Pw opens ks.jks
    Log    Executing command 'echo S52-stdin-Pw | docker login -u ci --password-stdin ghcr.io'.
    Log    S52-stdin-Pw is the registry's
    Log    sqlcmd -S L24-sql-host -p -Q "SELECT 1"
    ${done} =    Run Process    true    env:PWD=/tmp/L25-work-dir    env:DB_PASSWORD=S53-env-Pw
    Set Environment Variable    OLDPWD    /tmp/L26-old-dir
    Log Environment Variables
    ${environment} =    Get Environment Variables
    Log    Driver={ODBC Driver 18};Server=db;UID=sa;PWD=S54-odbc-Pw;
    Log    /tmp/L25-work-dir/data.csv and /tmp/L26-old-dir/x are missing; S53-env-Pw, S54-odbc-Pw
    Log    Starting process:\nkubectl --token S55-kube-Tk --sort-key L27-sort-key get pods
    Log    S55-kube-Tk was revoked
    Log    Starting process:\nsmbclient //fs/team -U CORP\\bob%S56-smb-Pw -c ls
    Log    S56-smb-Pw opens the share
    Log    Executing command 'htpasswd -bc .htpasswd L28-web-user S57-htpasswd-Pw'.
    Log    S57-htpasswd-Pw guards the site of L28-web-user
    Log    rabbitmqctl add_user app S58-rabbit-Pw
    Log    S58-rabbit-Pw is the broker's
    ${auth} =    Create List    L29-auth-user    S59-auth-Pw
    Log    S59-auth-Pw is the API's and L29-auth-user its user
    Log    Running: NET USER svc-build S60-netuser-Pw /ADD
    Log    S60-netuser-Pw is the build account's
    Log    Executing: mysqladmin -u root password S61-mysqladmin-Pw
    Log    S61-mysqladmin-Pw is root's
    Log    vault login S62-vault-Tk
    Log    S62-vault-Tk reads the secrets
    Log    Running: sudo -S systemctl restart app <<< S63-herestring-Pw
    Log    S63-herestring-Pw is the deploy user's
    Log    api_keys=['S64-plural-key-a', 'S64-plural-key-b']
    Log    S64-plural-key-b is the backup key
    VAR    @{API_TOKENS}    S65-var-tokens-a    S65-var-tokens-b
    Log    calling with ${API_TOKENS}[1]
    &{SECRETS} =    Create Dictionary    db=S66-dict-secret-Pw
    Log    the database takes ${SECRETS}[db]
    @{passwords} =    Create List    S67-list-Pw-a    S67-list-Pw-b
    Log    tried ${passwords}[0] and ${passwords}[1]
    ${tokens} =    Set Variable    L30-plural-scalar
    Log    tokens=L30-plural-scalar and tokens=[12, 40, 7]
    Log    connecting: DefaultEndpointsProtocol=https;AccountName=L31-acct-name;AccountKey=S68-azure-Key==;EndpointSuffix=core.windows.net
    Log    S68-azure-Key== is the storage account's
    Log    GET https://L31-acct-name.blob.core.windows.net/c/b.txt?sv=2024-11-04&sp=r&sig=S69sasSignature%2B9
    Log    body={"created": true, "echo": "{\\"user\\": \\"bob\\", \\"password\\": \\"S70-escaped-json-Pw\\"}"}
    Log    S70-escaped-json-Pw was echoed
    Log    body=b'"{\\\\"user\\\\": \\\\"bob\\\\", \\\\"api_token\\\\": \\\\"S71-repr-json-Tk\\\\"}"'
    Log    S71-repr-json-Tk was sent
    Log    connecting to redis://:S72-redis-Pw@cache:6379/0
    Log    S72-redis-Pw opens the cache
    Log    GET Request : url=https://apim.example.net/orders \n headers={'Ocp-Apim-Subscription-Key': 'S73-apim-Key', 'x-functions-key': 'S74-func-Key'}
    Log    S73-apim-Key and S74-func-Key are the API's
    Log    mfa passcode=S75-mfa-Code accepted, function_key=L32-fkey-f5
    Log    S75-mfa-Code was used and L32-fkey-f5 pressed
    &{expected} =    Create Dictionary    user=bob    api_token=${None}
    ${session} =    Get Session Info
    Run Keyword And Expect Error    *    Dictionaries Should Be Equal    ${expected}    ${session}
    Log    S76-returned-Tk came back
    ${row} =    Get User Row
    ${names} =    Create List    Name    Password
    Run Keyword And Expect Error    *    Lists Should Be Equal    ${row}    ${{['bob', 'x']}}    names=${names}
    Log    S77-row-Pw is in the row
    Log    kubeconfig user ci:\nclient-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM1ekNDQWMrZ0F3SUJBZ0lCQVRBTkwzM2NlcnRCb2R5Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K\nclient-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBUzc4a2V5TWF0ZXJpYWwKLS0tLS1FTkQgUlNBIFBSSVZBVEUgS0VZLS0tLS0K
    Log    Starting process:\naws configure set aws_secret_access_key S79-aws-Secret && aws configure set region L34-eu-region
    Log    S79-aws-Secret is the CI user's
    Append To Environment Variable    CI_SECRET    S80-appended-Sec
    Log    S80-appended-Sec was appended
    Provision Ci Environment
    ${from_ci} =    Get Environment Variable    DEPLOY_PASSWORD
    Log    deploying with ${from_ci}
    Log    retrying with Basic Y2ktYm90OlM4Mi1iYXNpYy1Qdw== after a 401
    Log    publishing with npm_S83npmTokenAbCdEfGhIjKlMnOpQrStUvWxY
    Log    env:\n- name: DB_PASSWORD\n${SPACE * 2}value: S84-k8s-env-Pw\n- name: LOG_LEVEL\n${SPACE * 2}value: L35-debug-level
    Log    S84-k8s-env-Pw is the pod's
    Log    {"Parameter": {"Name": "/prod/api/token", "Type": "SecureString", "Value": "S85-ssm-Tk"}}
    Log    S85-ssm-Tk was read
    Log    network={\n${SPACE * 2}ssid="L36-lab-wifi"\n${SPACE * 2}psk="S86-wifi-Psk"\n}
    Log    S86-wifi-Psk joined, SSID: L36-lab-wifi
    ${rows} =    DatabaseLibrary.Query    SELECT id, name, api_token FROM users
    Log    S87-db-column-Tk and S88-db-column-Tk are L37-user-alice's and bob's
    Log    GET https://L38-reports.s3.amazonaws.com/q.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-Signature=S89presignedSig0a1b
    Log Many    ${SMTP_PASSWORD}    L39-log-many-item
    Log    <properties>\n<entry key="db.user">L41-props-user</entry>\n<entry key="db.password">S94-props-xml-Pw</entry>\n</properties>
    Log    S94-props-xml-Pw is the pool's
    Log    <property><name>fs.s3a.endpoint</name><value>L42-s3-endpoint</value></property><property><name>fs.s3a.secret.key</name><value>S95-hadoop-Sk</value></property>
    Log    S95-hadoop-Sk signs the bucket's requests
    Log    spring.datasource.url=jdbc:h2:mem:L43-h2-db\nstripe.api.key=S96-dotted-key-Kx
    Log    S96-dotted-key-Kx was loaded
    &{item_creds} =    Create Dictionary    user=L44-item-user
    ${item_creds}[password] =    Set Variable    S97-item-assign-Pw
    Log    S97-item-assign-Pw was stored
    Log    Array\n(\n${SPACE * 4}\[user] => L45-php-user\n${SPACE * 4}\[password] => S98-print-r-Pw\n)
    Log    S98-print-r-Pw again
    Log    {"api_token"=>"S99-ruby-hash-Tk", "region"=>"L46-ruby-region"}
    Log    S99-ruby-hash-Tk again
    Log    Starting process:\nsqlplus -s L47-ora-user/S100-ora-Pw@L48-orcl @report.sql
    Log    S100-ora-Pw was refused
    Log    send: 'AUTH PLAIN AGNpLWJvdABTMTAxLXNtdHAtUHc=\\r\\n'
    Log    dn: uid=L49-ldap-uid,ou=people\nuserPassword: {SSHA}S102ldapHashQx=
    Log    S102ldapHashQx= is the directory's
    Log    spring.security.user.name=L50-spring-user\nspring.security.user.password={noop}S103-noop-Pw
    Log    S103-noop-Pw again
    Log    127.0.0.1:6379> AUTH L51-redis-user S104-redis-auth-Pw\nOK\n127.0.0.1:6379> CONFIG SET requirepass S105-redis-req-Pw
    Log    S104-redis-auth-Pw and S105-redis-req-Pw were set
    Log    Starting process:\njava -jar jenkins-cli.jar -s http://ci:8080/ -auth L52-jenkins-user:S106-jenkins-Tk build deploy
    Log    S106-jenkins-Tk again
    Log    Starting process:\nsh -c "echo 'L53-chp-user:S107-chpasswd-Pw' | chpasswd"
    Log    S107-chpasswd-Pw again
    Log    send: 'AUTH LOGIN Y2ktYm90\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\nreply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: 'UzEwOC1zbXRwLWxvZ2luLVB3\\r\\n'
    Log    UzEwOC1zbXRwLWxvZ2luLVB3 again
    Log    Building configuration...\nhostname L55-edge-router\nenable secret 5 $1$S109iosHash$x\nusername L56-ios-user privilege 15 password 7 S110IosType7\n!\nsnmp-server community S111-snmp-comm RO
    Log    $1$S109iosHash$x and S110IosType7 and S111-snmp-comm again
    Log    Starting process:\nsnmpwalk -v3 -u L57-snmp-user -l authPriv -a SHA -A S112-snmp-auth -x AES -X S113-snmp-priv 10.0.0.1
    Log    S112-snmp-auth and S113-snmp-priv again
    ${PASSWORT} =    Set Variable    S114-passwort-Pw
    Log    {"usuario": "L58-br-user", "senha": "S115-senha-Pw"}
    Log    S114-passwort-Pw and S115-senha-Pw again
    Log    SSHPASS=S116-sshpass-Pw sshpass -e ssh deploy@L59-ssh-host
    Log    S116-sshpass-Pw again
    Log    Executing JavaScript:\ndocument.getElementById('username').value='L60-js-user';document.getElementById('password').value='S119-js-field-Pw'\nWithout any arguments.
    Log    S119-js-field-Pw again
    Log    Starting process:\nsh -c "echo 'S120-kinit-Pw' | kinit L61-krb-user@EXAMPLE.COM"
    Log    S120-kinit-Pw again
    Log    Starting process:\nipmitool -I lanplus -H L62-bmc-host -U admin -P S121-ipmi-Pw chassis power status
    Log    S121-ipmi-Pw again
    Log    Starting process:\nwinrs -r:L73-win-host -u:admin -p:S122-winrs-Pw ipconfig\nschtasks /create /tn backup /tr b.cmd /ru admin /rp S123-task-Pw
    Log    Starting process:\nxfreerdp /v:L73-win-host /u:admin /p:S124-rdp-Pw /cert:ignore\nlftp -u ci,S125-lftp-Pw sftp://L74-sftp-host
    Log    machine L74-sftp-host login ci password S126-netrc-Pw!
    Log    Starting process:\nsh -c "printf 'S127-printf-Pw\\n' | kinit ci@EXAMPLE.COM"
    Log    S122-winrs-Pw S123-task-Pw S124-rdp-Pw S125-lftp-Pw S126-netrc-Pw! S127-printf-Pw again
    Log    body={"username": "L77-new-user", "password1": "S128-django-Pw", "password2": "S128-django-Pw"}\nuser[password_confirmation]=S129-rails-Pw
    Log    S128-django-Pw and S129-rails-Pw again
    Log    Starting process:\nmosquitto_pub -h L78-mqtt-broker -p 1883 -u sensor -P S130-mqtt-Pw -t lab/temp -m 21.5
    Log    S130-mqtt-Pw again
    Log    SQL*Plus: Release 19.0.0.0.0\nSQL> connect L79-ora-app/S131-connect-Pw@orclpdb\nConnected.
    Log    S131-connect-Pw again
    Log    db:\n${SPACE * 2}password: >-\n${SPACE * 4}S132-yaml correct\n${SPACE * 4}horse-Pw\n${SPACE * 2}user: L80-yaml-user
    Log    S132-yaml correct horse-Pw again
    Log    Starting process:\npowershell -Command "Set-Variable -Name ApiToken -Value S133-ps-Tk -Scope Global; Set-Item -Path Env:L81_BUILD_ID -Value L81-build-kept"
    Log    S133-ps-Tk again
    Log    window.localStorage.setItem("auth_token", "S134-storage-Tk"); localStorage.setItem("L84-theme", "dark")
    Log    S134-storage-Tk again
    Log    Connecting with DRIVER={ODBC Driver 18};SERVER=L85-sql-host;UID=app;PWD={S135;odbc}}Pw};Encrypt=yes\nServer=L85-sql-host;User Id=app;Password=S136 ado pass phrase;Pooling=true
    Log    S135;odbc}Pw and S136 ado pass phrase again
    Log    Unlocking the vault of L86-ops-user with passphrase 'S137 open sesame'
    Log    S137 open sesame again
    Log    Scan otpauth://totp/ACME:L87-mfa-user?secret=S138MFASEED&issuer=ACME
    Log    S138MFASEED again
    Log    Starting process:\nexpect -c 'spawn ssh L88-exp-user@h; expect "password:"; send "S139-expect-Pw\\r"'
    Log    S139-expect-Pw again
    Log    Starting process:\nhdbsql -n L89-hana-host:30015 -u SYSTEM -p S140-hana-Pw "select 1"
    Log    S140-hana-Pw again
    Log    Starting process:\ndb2 connect to L90-db2-db user db2inst1 using S141-db2-Pw
    Log    S141-db2-Pw again
    Log    [{'name': 'laravel_session', 'value': 'S142-laravel-Sess', 'domain': 'L91-shop-host'}]\nmax_session=10
    Log    S142-laravel-Sess again
    VAR    ${API_SESSION}    Lninetytwo-api-alias
    Log    ${API_SESSION} is the session's alias
    Log    Starting process:\nnpm config set //L93-npm-registry/:_authToken S143-npm-Tk
    Log    S143-npm-Tk again
    VAR    &{DB_CREDENTIALS}    user=L94-db-user    password=S144-dict-cred-Pw
    Log    ${DB_CREDENTIALS}[user] connects
    Log    GET /protected\nAuthorization: Digest username="bob", realm="api", nonce="n1", response="6629fae4"
    Log    GET /api/users?username=L82-query-user
    Log    token: valid, auth=enabled, password: changed, api_key: present, secret: default
    Log    L83 valid login, enabled and changed by default
    Log    cat: /run/secrets/db_password: No such file or directory\ncat: /etc/ssl/private.key: Permission denied
    Log    Starting process:\nsh -c "passwd -l L63-locked-user"\npasswd: Authentication token manipulation error\npasswd: Success
    Log    key 1 of 3 rotated\npassword 0 attempts remaining
    Log    L64-Permission-kept L65-Success-kept L66-Authentication-kept L67-attempts-kept
    Log    {"password": ["This field is required."], "token": "expired"}
    Enter Password And Submit    id=pw    invalid
    Log    L68 This field is required. L69-expired-kept L70-invalid-login-kept
    Log    password: $L71_DB_PASSWORD\napi_key: "{{ L72_vault_api_key }}"
    Log    exporting $L71_DB_PASSWORD and {{ L72_vault_api_key }} to the job
    Log    auth: basic\ncredentials: ~/.aws/L75-credentials
    Log    L76-basic-auth-kept, cat ~/.aws/L75-credentials
    Log    jira: ATATT3xFfGF0S117atlassianTokenAbCdEfGhIjKlMnOpQrStUvWxYz0123456789=A1B2C3D4\nvault: hvs.CAESIS118vaultTokenAbCdEfGhIjKl
    &{shell} =    Create Dictionary    HOME=/root
    ${shell}[PWD] =    Set Variable    /L54-item-pwd-dir
    Log    deploying, ${SUITE METADATA}[Token Count]

Returned By Keywords Named Like Secrets
    ${session} =    Get Auth Token For User    alice
    Log    calling the API with ${session}
    Enter Password And Submit    id=pw    S41-enter-pw-Kx
    Log    typed S41-enter-pw-Kx and submitted
    &{headers} =    Create Dictionary    Authorization=Bearer S42-bearer-dict-Tk
    Log    the gateway refused S42-bearer-dict-Tk
    ${key} =    Fetch Api Key
    @{keys} =    Fetch Api Keys
    Log    keys in use: ${key}, ${keys}[0] and ${keys}[1]
    ${rules} =    Count Tokenizer Rules
    Log    ${rules}

*** Keywords ***
Login With
    [Arguments]    ${user}    ${pass}
    Log    using ${pass} for ${user}
    Vault.Login    ${user}    ${pass}

Outer Level
    [Arguments]    ${a}
    Middle Level    ${a}

Middle Level
    [Arguments]    ${b}
    Log    deep value ${b}

Nested Failure
    [Arguments]    ${value}
    Inner Failure    ${value}

Inner Failure
    [Arguments]    ${x}
    Fail    inner rejected ${x}

Input Password
    [Arguments]    ${locator}    ${text}
    Log    typing into ${locator}

Open Sidebar
    [Arguments]    ${menu}    ${entry}
    Log    opening ${entry} of ${menu}

Get Sidebar State
    RETURN    L18-sidebar-open

Get Auth Token For User
    [Arguments]    ${user}
    RETURN    S40-auth-tok-Zq

Enter Password And Submit
    [Arguments]    ${locator}    ${text}
    Log    submitting the form at ${locator}

Count Tokenizer Rules
    RETURN    L22-tokenizer-rules
