PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO alembic_version VALUES('0004_tag_followers');
CREATE TABLE audit_log (
	id INTEGER NOT NULL, 
	at DATETIME NOT NULL, 
	actor VARCHAR(128) NOT NULL, 
	chat VARCHAR(128), 
	action VARCHAR(64) NOT NULL, 
	allowed BOOLEAN NOT NULL, 
	detail TEXT, 
	CONSTRAINT pk_audit_log PRIMARY KEY (id)
);
CREATE TABLE auth_failures (
	platform VARCHAR(16) NOT NULL, 
	reason TEXT NOT NULL, 
	failed_at DATETIME NOT NULL, 
	CONSTRAINT pk_auth_failures PRIMARY KEY (platform)
);
CREATE TABLE broadcasts (
	id INTEGER NOT NULL, 
	text TEXT NOT NULL, 
	audience TEXT NOT NULL, 
	audience_size INTEGER NOT NULL, 
	created_by VARCHAR(128) NOT NULL, 
	origin_chat VARCHAR(128), 
	status VARCHAR(16) NOT NULL, 
	created_at DATETIME NOT NULL, 
	confirmed_at DATETIME, 
	finished_at DATETIME, 
	CONSTRAINT pk_broadcasts PRIMARY KEY (id)
);
CREATE TABLE chat_pages (
	chat_pk INTEGER NOT NULL, 
	page_id INTEGER NOT NULL, 
	fingerprint VARCHAR(64) NOT NULL, 
	planned_at DATETIME NOT NULL, 
	CONSTRAINT pk_chat_pages PRIMARY KEY (chat_pk, page_id)
);
INSERT INTO chat_pages VALUES(1,3,'f9354bded91e5832a675a6c8','2026-12-07 01:27:58.701392');
INSERT INTO chat_pages VALUES(1,7,'fc6456eb31a1963818954784','2026-12-07 01:28:09.958224');
CREATE TABLE chats (
	id INTEGER NOT NULL, 
	platform VARCHAR(16) NOT NULL, 
	chat_id VARCHAR(64) NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	title VARCHAR(255), 
	state VARCHAR(16) NOT NULL, 
	mode VARCHAR(16) NOT NULL, 
	digest_time VARCHAR(5) NOT NULL, 
	timezone VARCHAR(64) NOT NULL, 
	lang VARCHAR(8) NOT NULL, 
	filter TEXT NOT NULL, 
	cursor INTEGER NOT NULL, 
	next_digest_at DATETIME, 
	inactive_reason TEXT, 
	inactive_code VARCHAR(64), 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	weekday INTEGER NOT NULL, 
	quiet VARCHAR(11), 
	digest_limit INTEGER, 
	held_until DATETIME, 
	team_id VARCHAR(32), 
	enterprise_id VARCHAR(32), 
	CONSTRAINT pk_chats PRIMARY KEY (id), 
	CONSTRAINT uq_chats_platform UNIQUE (platform, chat_id)
);
INSERT INTO chats VALUES(1,'telegram','1001','private',NULL,'active','daily','09:00','UTC','en','rl',2,'2026-12-07 09:00:00.000000',NULL,NULL,'2026-12-07 01:27:47.040905','2026-12-07 01:27:47.040905',0,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE incidents (
	id INTEGER NOT NULL, 
	"key" VARCHAR(2100) NOT NULL, 
	detail TEXT NOT NULL, 
	started_at DATETIME NOT NULL, 
	cleared_at DATETIME, 
	CONSTRAINT pk_incidents PRIMARY KEY (id)
);
CREATE TABLE leases (
	name VARCHAR(64) NOT NULL, 
	holder VARCHAR(128) NOT NULL, 
	expires_at DATETIME NOT NULL, 
	CONSTRAINT pk_leases PRIMARY KEY (name)
);
CREATE TABLE slack_installations (
	id INTEGER NOT NULL, 
	enterprise_id VARCHAR(32) NOT NULL, 
	team_id VARCHAR(32) NOT NULL, 
	is_enterprise_install BOOLEAN NOT NULL, 
	app_id VARCHAR(32), 
	enterprise_name VARCHAR(255), 
	enterprise_url VARCHAR(2000), 
	team_name VARCHAR(255), 
	bot_id VARCHAR(32), 
	bot_user_id VARCHAR(32), 
	bot_scopes TEXT, 
	bot_token TEXT NOT NULL, 
	bot_refresh_token TEXT, 
	bot_token_expires_at DATETIME, 
	installer_user_id VARCHAR(32), 
	token_type VARCHAR(16), 
	installed_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_slack_installations PRIMARY KEY (id), 
	CONSTRAINT uq_slack_installations_enterprise_id UNIQUE (enterprise_id, team_id)
);
CREATE TABLE slack_oauth_states (
	state_hash VARCHAR(64) NOT NULL, 
	expires_at DATETIME NOT NULL, 
	CONSTRAINT pk_slack_oauth_states PRIMARY KEY (state_hash)
);
CREATE TABLE source_streaks (
	name VARCHAR(2000) NOT NULL, 
	failures INTEGER NOT NULL, 
	last_error TEXT, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_source_streaks PRIMARY KEY (name)
);
CREATE TABLE sources (
	id INTEGER NOT NULL, 
	name VARCHAR(2000) NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	baseline_at DATETIME, 
	last_poll_at DATETIME, 
	last_ok_at DATETIME, 
	last_error TEXT, 
	etag VARCHAR(1000), 
	last_modified VARCHAR(200), 
	CONSTRAINT pk_sources PRIMARY KEY (id), 
	CONSTRAINT uq_sources_name UNIQUE (name)
);
INSERT INTO sources VALUES(1,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/feed.atom?token=OldBuildTokenOLD1','feed','2026-12-07 01:27:51.301044','2026-12-07 01:27:54.963384','2026-12-07 01:27:54.963384',NULL,NULL,NULL);
INSERT INTO sources VALUES(2,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/feed.atom?token=OldBuildTokenNEW2','feed','2026-12-07 01:28:02.505143','2026-12-07 01:28:06.489502','2026-12-07 01:28:06.489502',NULL,NULL,NULL);
CREATE TABLE alert_admins (
	platform VARCHAR(16) NOT NULL, 
	user_id VARCHAR(64) NOT NULL, 
	chat_pk INTEGER, 
	enabled BOOLEAN NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_alert_admins PRIMARY KEY (platform, user_id), 
	CONSTRAINT fk_alert_admins_chat_pk_chats FOREIGN KEY(chat_pk) REFERENCES chats (id) ON DELETE SET NULL
);
CREATE TABLE chat_feeds (
	chat_pk INTEGER NOT NULL, 
	token_hash VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_chat_feeds PRIMARY KEY (chat_pk), 
	CONSTRAINT fk_chat_feeds_chat_pk_chats FOREIGN KEY(chat_pk) REFERENCES chats (id) ON DELETE CASCADE, 
	CONSTRAINT uq_chat_feeds_token_hash UNIQUE (token_hash)
);
CREATE TABLE chat_tags (
	chat_pk INTEGER NOT NULL, 
	tag VARCHAR(64) NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	CONSTRAINT pk_chat_tags PRIMARY KEY (chat_pk, tag), 
	CONSTRAINT fk_chat_tags_chat_pk_chats FOREIGN KEY(chat_pk) REFERENCES chats (id) ON DELETE CASCADE
);
INSERT INTO chat_tags VALUES(1,'rl','any');
CREATE TABLE chat_weights (
	chat_pk INTEGER NOT NULL, 
	weights TEXT NOT NULL, 
	based_at DATETIME NOT NULL, 
	CONSTRAINT pk_chat_weights PRIMARY KEY (chat_pk), 
	CONSTRAINT fk_chat_weights_chat_pk_chats FOREIGN KEY(chat_pk) REFERENCES chats (id) ON DELETE CASCADE
);
CREATE TABLE outbox (
	id INTEGER NOT NULL, 
	chat_pk INTEGER NOT NULL, 
	platform VARCHAR(16) NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	payload TEXT NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	priority INTEGER NOT NULL, 
	attempts INTEGER NOT NULL, 
	parts_sent INTEGER NOT NULL, 
	thread_ref VARCHAR(64), 
	not_before DATETIME NOT NULL, 
	claimed_by VARCHAR(64), 
	claimed_at DATETIME, 
	last_error TEXT, 
	broadcast_id INTEGER, 
	created_at DATETIME NOT NULL, 
	sent_at DATETIME, 
	CONSTRAINT pk_outbox PRIMARY KEY (id), 
	CONSTRAINT fk_outbox_broadcast_id_broadcasts FOREIGN KEY(broadcast_id) REFERENCES broadcasts (id) ON DELETE SET NULL, 
	CONSTRAINT fk_outbox_chat_pk_chats FOREIGN KEY(chat_pk) REFERENCES chats (id) ON DELETE CASCADE
);
INSERT INTO outbox VALUES(1,1,'telegram','digest','{"v":1,"pages":[[3,false]],"date":"2026-12-07","ranked":true}','queued',10,1,0,NULL,'2026-12-07 01:28:28.258809',NULL,'2026-12-07 01:27:58.795667','network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]',NULL,'2026-12-07 01:27:58.701392',NULL);
INSERT INTO outbox VALUES(2,1,'telegram','digest','{"v":1,"pages":[[7,false]],"date":"2026-12-07","ranked":true}','queued',10,1,0,NULL,'2026-12-07 01:28:37.656316',NULL,'2026-12-07 01:28:10.006559','network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]',NULL,'2026-12-07 01:28:09.958224',NULL);
CREATE TABLE pages (
	id INTEGER NOT NULL, 
	source_id INTEGER NOT NULL, 
	"key" VARCHAR(1000) NOT NULL, 
	url VARCHAR(2000), 
	type VARCHAR(64), 
	arxiv VARCHAR(64), 
	created DATE, 
	updated DATE, 
	fingerprint VARCHAR(64) NOT NULL, 
	first_seen_at DATETIME NOT NULL, 
	changed_at DATETIME NOT NULL, 
	removed_at DATETIME, paper VARCHAR(1000), 
	CONSTRAINT pk_pages PRIMARY KEY (id), 
	CONSTRAINT fk_pages_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (id) ON DELETE CASCADE, 
	CONSTRAINT uq_pages_source_id UNIQUE (source_id, "key")
);
INSERT INTO pages VALUES(1,1,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1','http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1.html',NULL,NULL,NULL,'2026-12-01','e03e0ca05af841d75ac02e26','2026-12-07 01:27:51.301044','2026-12-07 01:27:51.301044',NULL,'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1');
INSERT INTO pages VALUES(2,1,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2','http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2.html',NULL,NULL,NULL,'2026-12-02','3af51bd1b87f6867327b2ce3','2026-12-07 01:27:51.301044','2026-12-07 01:27:51.301044',NULL,'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2');
INSERT INTO pages VALUES(3,1,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3','http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3.html',NULL,NULL,NULL,'2026-12-03','f9354bded91e5832a675a6c8','2026-12-07 01:27:54.963384','2026-12-07 01:27:54.963384',NULL,'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3');
INSERT INTO pages VALUES(4,2,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1','http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1.html',NULL,NULL,NULL,'2026-12-01','e03e0ca05af841d75ac02e26','2026-12-07 01:28:02.505143','2026-12-07 01:28:02.505143',NULL,'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1');
INSERT INTO pages VALUES(5,2,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2','http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2.html',NULL,NULL,NULL,'2026-12-02','3af51bd1b87f6867327b2ce3','2026-12-07 01:28:02.505143','2026-12-07 01:28:02.505143',NULL,'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2');
INSERT INTO pages VALUES(6,2,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3','http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3.html',NULL,NULL,NULL,'2026-12-03','f9354bded91e5832a675a6c8','2026-12-07 01:28:02.505143','2026-12-07 01:28:02.505143',NULL,'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3');
INSERT INTO pages VALUES(7,2,'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/4','http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/4.html',NULL,NULL,NULL,'2026-12-04','fc6456eb31a1963818954784','2026-12-07 01:28:06.489502','2026-12-07 01:28:06.489502',NULL,'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/4');
CREATE TABLE source_files (
	source_id INTEGER NOT NULL, 
	path VARCHAR(1000) NOT NULL, 
	mtime_ns BIGINT NOT NULL, 
	size BIGINT NOT NULL, 
	error TEXT, 
	CONSTRAINT pk_source_files PRIMARY KEY (source_id, path), 
	CONSTRAINT fk_source_files_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (id) ON DELETE CASCADE
);
CREATE TABLE page_events (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	page_id INTEGER NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	fingerprint VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT fk_page_events_page_id_pages FOREIGN KEY(page_id) REFERENCES pages (id) ON DELETE CASCADE
);
INSERT INTO page_events VALUES(1,3,'new','f9354bded91e5832a675a6c8','2026-12-07 01:27:54.963384');
INSERT INTO page_events VALUES(2,7,'new','fc6456eb31a1963818954784','2026-12-07 01:28:06.489502');
CREATE TABLE page_tags (
	page_id INTEGER NOT NULL, 
	tag VARCHAR(64) NOT NULL, 
	position INTEGER NOT NULL, 
	CONSTRAINT pk_page_tags PRIMARY KEY (page_id, tag), 
	CONSTRAINT fk_page_tags_page_id_pages FOREIGN KEY(page_id) REFERENCES pages (id) ON DELETE CASCADE
);
INSERT INTO page_tags VALUES(1,'rl',0);
INSERT INTO page_tags VALUES(2,'rl',0);
INSERT INTO page_tags VALUES(3,'rl',0);
INSERT INTO page_tags VALUES(4,'rl',0);
INSERT INTO page_tags VALUES(5,'rl',0);
INSERT INTO page_tags VALUES(6,'rl',0);
INSERT INTO page_tags VALUES(7,'rl',0);
CREATE TABLE page_texts (
	page_id INTEGER NOT NULL, 
	lang VARCHAR(8) NOT NULL, 
	title TEXT NOT NULL, 
	tldr TEXT NOT NULL, 
	CONSTRAINT pk_page_texts PRIMARY KEY (page_id, lang), 
	CONSTRAINT fk_page_texts_page_id_pages FOREIGN KEY(page_id) REFERENCES pages (id) ON DELETE CASCADE
);
INSERT INTO page_texts VALUES(1,'en','Paper 1','TL;DR 1.');
INSERT INTO page_texts VALUES(2,'en','Paper 2','TL;DR 2.');
INSERT INTO page_texts VALUES(3,'en','Paper 3','TL;DR 3.');
INSERT INTO page_texts VALUES(4,'en','Paper 1','TL;DR 1.');
INSERT INTO page_texts VALUES(5,'en','Paper 2','TL;DR 2.');
INSERT INTO page_texts VALUES(6,'en','Paper 3','TL;DR 3.');
INSERT INTO page_texts VALUES(7,'en','Paper 4','TL;DR 4.');
CREATE TABLE votes (
	chat_pk INTEGER NOT NULL, 
	page_id INTEGER NOT NULL, 
	user_id VARCHAR(128) NOT NULL, 
	value INTEGER NOT NULL, 
	voted_at DATETIME NOT NULL, 
	CONSTRAINT pk_votes PRIMARY KEY (chat_pk, page_id, user_id), 
	CONSTRAINT fk_votes_chat_pk_chats FOREIGN KEY(chat_pk) REFERENCES chats (id) ON DELETE CASCADE, 
	CONSTRAINT fk_votes_page_id_pages FOREIGN KEY(page_id) REFERENCES pages (id) ON DELETE CASCADE
);
CREATE TABLE tag_followers (
	day DATE NOT NULL, 
	tag VARCHAR(64) NOT NULL, 
	chats INTEGER NOT NULL, 
	CONSTRAINT pk_tag_followers PRIMARY KEY (day, tag)
);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('page_events',2);
CREATE INDEX ix_audit_log_at ON audit_log (at);
CREATE INDEX ix_chats_due ON chats (state, next_digest_at);
CREATE INDEX ix_chats_team ON chats (team_id);
CREATE INDEX ix_incidents_open ON incidents (cleared_at);
CREATE INDEX ix_slack_oauth_states_expires ON slack_oauth_states (expires_at);
CREATE INDEX ix_chat_tags_tag ON chat_tags (tag);
CREATE INDEX ix_outbox_broadcast ON outbox (broadcast_id, status);
CREATE INDEX ix_outbox_chat ON outbox (chat_pk, status);
CREATE INDEX ix_outbox_ready ON outbox (status, priority DESC, not_before, id);
CREATE INDEX ix_page_tags_tag ON page_tags (tag);
CREATE TRIGGER chat_pages_forget_chat AFTER DELETE ON chats
        BEGIN DELETE FROM chat_pages WHERE chat_pk = OLD.id; END;
CREATE TRIGGER chat_pages_forget_page AFTER DELETE ON pages
        BEGIN DELETE FROM chat_pages WHERE page_id = OLD.id; END;
CREATE INDEX ix_pages_paper ON pages (paper);
COMMIT;
