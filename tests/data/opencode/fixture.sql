-- An OpenCode 1.2 database (opencode.db), shaped like the tables of
-- packages/opencode/src/session/session.sql.ts (columns mcpage reads; the
-- real tables have more, and sync renders whatever columns a row has).
-- Message and part rows keep their content as JSON text in `data`, in the
-- shapes of message-v2.ts. Written for mcpage's tests; no user data.
PRAGMA journal_mode = WAL;
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, cost REAL NOT NULL DEFAULT 0,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);

INSERT INTO project VALUES ('prj_ledger', '/home/ada/src/ledger-api', 1764000000000, 1764000000000);
INSERT INTO session VALUES ('ses_4a1b2c3d4e5fKeyset', 'prj_ledger', NULL, 'brave-otter', '/home/ada/src/ledger-api',
  'Keyset pagination for GET /accounts', '1.2.6', 0.0123, 1764000000000, 1764000090000, NULL);
INSERT INTO session VALUES ('ses_4a1b2c3d4e60Explore', 'prj_ledger', 'ses_4a1b2c3d4e5fKeyset', 'calm-heron', '/home/ada/src/ledger-api',
  'Find the list endpoints (@general subagent)', '1.2.6', 0.002, 1764000030000, 1764000040000, NULL);

INSERT INTO message VALUES ('msg_a01', 'ses_4a1b2c3d4e5fKeyset', 1764000001000, 1764000001000,
  '{"role":"user","time":{"created":1764000001000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}');
INSERT INTO part VALUES ('prt_a01', 'msg_a01', 'ses_4a1b2c3d4e5fKeyset', 1764000001000, 1764000001000,
  '{"type":"text","text":"Add keyset pagination to GET /accounts; keep the old offset parameter working"}');
INSERT INTO part VALUES ('prt_a02', 'msg_a01', 'ses_4a1b2c3d4e5fKeyset', 1764000001000, 1764000001000,
  '{"type":"file","mime":"text/x-python","filename":"accounts.py","url":"file:///home/ada/src/ledger-api/src/routes/accounts.py"}');
INSERT INTO message VALUES ('msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000002000, 1764000020000,
  '{"role":"assistant","time":{"created":1764000002000,"completed":1764000020000},"parentID":"msg_a01","modelID":"claude-sonnet-4-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/home/ada/src/ledger-api","root":"/home/ada/src/ledger-api"},"cost":0.0123,"tokens":{"input":5120,"output":380,"reasoning":64,"cache":{"read":0,"write":0}}}');
INSERT INTO part VALUES ('prt_a03', 'msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000002100, 1764000002100,
  '{"type":"step-start","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"}');
INSERT INTO part VALUES ('prt_a04', 'msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000002200, 1764000003000,
  '{"type":"reasoning","text":"The cursor must encode (created_at, id) so pages stay stable.","time":{"start":1764000002200,"end":1764000003000}}');
INSERT INTO part VALUES ('prt_a05', 'msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000003100, 1764000004000,
  '{"type":"tool","callID":"toolu_01Read","tool":"read","state":{"status":"completed","input":{"filePath":"/home/ada/src/ledger-api/src/routes/accounts.py"},"output":"<file>\n00001| def list_accounts(db, offset=0):\n</file>","title":"src/routes/accounts.py","metadata":{},"time":{"start":1764000003100,"end":1764000004000}}}');
INSERT INTO part VALUES ('prt_a06', 'msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000005000, 1764000009000,
  '{"type":"tool","callID":"toolu_02Bash","tool":"bash","state":{"status":"error","input":{"command":"pytest -q tests/test_accounts.py","description":"Run the tests"},"error":"Error: 2 failed, 10 passed","metadata":{},"time":{"start":1764000005000,"end":1764000009000}}}');
INSERT INTO part VALUES ('prt_a07', 'msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000019000, 1764000019500,
  '{"type":"text","text":"Keyset cursors are in; two tests still expect the old page size.","time":{"start":1764000019000,"end":1764000019500}}');
INSERT INTO part VALUES ('prt_a08', 'msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000020000, 1764000020000,
  '{"type":"step-finish","reason":"stop","cost":0.0123,"tokens":{"input":5120,"output":380,"reasoning":64,"cache":{"read":0,"write":0}}}');
INSERT INTO part VALUES ('prt_a09', 'msg_a02', 'ses_4a1b2c3d4e5fKeyset', 1764000020100, 1764000020100, 'not json: a row cut by a crash');
INSERT INTO message VALUES ('msg_a03', 'ses_4a1b2c3d4e5fKeyset', 1764000030000, 1764000030000,
  '{"role":"user","time":{"created":1764000030000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}');
INSERT INTO part VALUES ('prt_a10', 'msg_a03', 'ses_4a1b2c3d4e5fKeyset', 1764000030000, 1764000030000,
  '{"type":"text","text":"Fix the two tests"}');
INSERT INTO message VALUES ('msg_a04', 'ses_4a1b2c3d4e5fKeyset', 1764000031000, 1764000032000,
  '{"role":"assistant","time":{"created":1764000031000},"parentID":"msg_a03","modelID":"claude-sonnet-4-5","providerID":"anthropic","mode":"build","error":{"name":"APIError","data":{"message":"Overloaded","statusCode":529,"isRetryable":true}}}');

INSERT INTO message VALUES ('msg_b01', 'ses_4a1b2c3d4e60Explore', 1764000030500, 1764000030500,
  '{"role":"user","time":{"created":1764000030500},"agent":"general","model":{"providerID":"anthropic","modelID":"claude-haiku-4-5"}}');
INSERT INTO part VALUES ('prt_b01', 'msg_b01', 'ses_4a1b2c3d4e60Explore', 1764000030500, 1764000030500,
  '{"type":"text","text":"List every endpoint that returns a list of accounts."}');
INSERT INTO message VALUES ('msg_b02', 'ses_4a1b2c3d4e60Explore', 1764000031000, 1764000040000,
  '{"role":"assistant","time":{"created":1764000031000,"completed":1764000040000},"parentID":"msg_b01","modelID":"claude-haiku-4-5","providerID":"anthropic","mode":"general"}');
INSERT INTO part VALUES ('prt_b02', 'msg_b02', 'ses_4a1b2c3d4e60Explore', 1764000039000, 1764000039000,
  '{"type":"text","text":"GET /accounts and GET /accounts/search."}');
