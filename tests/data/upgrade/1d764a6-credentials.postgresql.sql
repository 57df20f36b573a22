--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: chat_pages_forget_chats(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.chat_pages_forget_chats() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN DELETE FROM chat_pages WHERE chat_pk IN (SELECT id FROM gone); RETURN NULL; END
        $$;


--
-- Name: chat_pages_forget_pages(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.chat_pages_forget_pages() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN DELETE FROM chat_pages WHERE page_id IN (SELECT id FROM gone); RETURN NULL; END
        $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: alembic_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);


--
-- Name: alert_admins; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alert_admins (
    platform character varying(16) NOT NULL,
    user_id character varying(64) NOT NULL,
    chat_pk integer,
    enabled boolean NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: audit_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_log (
    id integer NOT NULL,
    at timestamp without time zone NOT NULL,
    actor character varying(128) NOT NULL,
    chat character varying(128),
    action character varying(64) NOT NULL,
    allowed boolean NOT NULL,
    detail text
);


--
-- Name: audit_log_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.audit_log_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: audit_log_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.audit_log_id_seq OWNED BY public.audit_log.id;


--
-- Name: auth_failures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_failures (
    platform character varying(16) NOT NULL,
    reason text NOT NULL,
    failed_at timestamp without time zone NOT NULL
);


--
-- Name: broadcasts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.broadcasts (
    id integer NOT NULL,
    text text NOT NULL,
    audience text NOT NULL,
    audience_size integer NOT NULL,
    created_by character varying(128) NOT NULL,
    origin_chat character varying(128),
    status character varying(16) NOT NULL,
    created_at timestamp without time zone NOT NULL,
    confirmed_at timestamp without time zone,
    finished_at timestamp without time zone
);


--
-- Name: broadcasts_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.broadcasts_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: broadcasts_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.broadcasts_id_seq OWNED BY public.broadcasts.id;


--
-- Name: chat_feeds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_feeds (
    chat_pk integer NOT NULL,
    token_hash character varying(64) NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: chat_pages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_pages (
    chat_pk integer NOT NULL,
    page_id integer NOT NULL,
    fingerprint character varying(64) NOT NULL,
    planned_at timestamp without time zone NOT NULL
);


--
-- Name: chat_tags; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_tags (
    chat_pk integer NOT NULL,
    tag character varying(64) NOT NULL,
    kind character varying(16) NOT NULL
);


--
-- Name: chat_weights; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_weights (
    chat_pk integer NOT NULL,
    weights text NOT NULL,
    based_at timestamp without time zone NOT NULL
);


--
-- Name: chats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chats (
    id integer NOT NULL,
    platform character varying(16) NOT NULL,
    chat_id character varying(64) NOT NULL,
    kind character varying(16) NOT NULL,
    title character varying(255),
    state character varying(16) NOT NULL,
    mode character varying(16) NOT NULL,
    digest_time character varying(5) NOT NULL,
    timezone character varying(64) NOT NULL,
    lang character varying(8) NOT NULL,
    filter text NOT NULL,
    cursor integer NOT NULL,
    next_digest_at timestamp without time zone,
    inactive_reason text,
    inactive_code character varying(64),
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL,
    weekday integer NOT NULL,
    quiet character varying(11),
    digest_limit integer,
    held_until timestamp without time zone,
    team_id character varying(32),
    enterprise_id character varying(32)
);


--
-- Name: chats_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.chats_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: chats_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.chats_id_seq OWNED BY public.chats.id;


--
-- Name: incidents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.incidents (
    id integer NOT NULL,
    key character varying(2100) NOT NULL,
    detail text NOT NULL,
    started_at timestamp without time zone NOT NULL,
    cleared_at timestamp without time zone
);


--
-- Name: incidents_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.incidents_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: incidents_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.incidents_id_seq OWNED BY public.incidents.id;


--
-- Name: leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.leases (
    name character varying(64) NOT NULL,
    holder character varying(128) NOT NULL,
    expires_at timestamp without time zone NOT NULL
);


--
-- Name: outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outbox (
    id bigint NOT NULL,
    chat_pk integer NOT NULL,
    platform character varying(16) NOT NULL,
    kind character varying(16) NOT NULL,
    payload text NOT NULL,
    status character varying(16) NOT NULL,
    priority integer NOT NULL,
    attempts integer NOT NULL,
    parts_sent integer NOT NULL,
    thread_ref character varying(64),
    not_before timestamp without time zone NOT NULL,
    claimed_by character varying(64),
    claimed_at timestamp without time zone,
    last_error text,
    broadcast_id integer,
    created_at timestamp without time zone NOT NULL,
    sent_at timestamp without time zone
);


--
-- Name: outbox_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.outbox_id_seq OWNED BY public.outbox.id;


--
-- Name: page_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.page_events (
    id integer NOT NULL,
    page_id integer NOT NULL,
    kind character varying(16) NOT NULL,
    fingerprint character varying(64) NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: page_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.page_events_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: page_events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.page_events_id_seq OWNED BY public.page_events.id;


--
-- Name: page_tags; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.page_tags (
    page_id integer NOT NULL,
    tag character varying(64) NOT NULL,
    "position" integer NOT NULL
);


--
-- Name: page_texts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.page_texts (
    page_id integer NOT NULL,
    lang character varying(8) NOT NULL,
    title text NOT NULL,
    tldr text NOT NULL
);


--
-- Name: pages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pages (
    id integer NOT NULL,
    source_id integer NOT NULL,
    key character varying(1000) NOT NULL,
    url character varying(2000),
    type character varying(64),
    arxiv character varying(64),
    created date,
    updated date,
    fingerprint character varying(64) NOT NULL,
    first_seen_at timestamp without time zone NOT NULL,
    changed_at timestamp without time zone NOT NULL,
    removed_at timestamp without time zone,
    paper character varying(1000)
);


--
-- Name: pages_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.pages_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: pages_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.pages_id_seq OWNED BY public.pages.id;


--
-- Name: slack_installations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.slack_installations (
    id integer NOT NULL,
    enterprise_id character varying(32) NOT NULL,
    team_id character varying(32) NOT NULL,
    is_enterprise_install boolean NOT NULL,
    app_id character varying(32),
    enterprise_name character varying(255),
    enterprise_url character varying(2000),
    team_name character varying(255),
    bot_id character varying(32),
    bot_user_id character varying(32),
    bot_scopes text,
    bot_token text NOT NULL,
    bot_refresh_token text,
    bot_token_expires_at timestamp without time zone,
    installer_user_id character varying(32),
    token_type character varying(16),
    installed_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: slack_installations_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.slack_installations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: slack_installations_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.slack_installations_id_seq OWNED BY public.slack_installations.id;


--
-- Name: slack_oauth_states; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.slack_oauth_states (
    state_hash character varying(64) NOT NULL,
    expires_at timestamp without time zone NOT NULL
);


--
-- Name: source_files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.source_files (
    source_id integer NOT NULL,
    path character varying(1000) NOT NULL,
    mtime_ns bigint NOT NULL,
    size bigint NOT NULL,
    error text
);


--
-- Name: source_streaks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.source_streaks (
    name character varying(2000) NOT NULL,
    failures integer NOT NULL,
    last_error text,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: sources; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sources (
    id integer NOT NULL,
    name character varying(2000) NOT NULL,
    kind character varying(16) NOT NULL,
    baseline_at timestamp without time zone,
    last_poll_at timestamp without time zone,
    last_ok_at timestamp without time zone,
    last_error text,
    etag character varying(1000),
    last_modified character varying(200)
);


--
-- Name: sources_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.sources_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: sources_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.sources_id_seq OWNED BY public.sources.id;


--
-- Name: tag_followers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tag_followers (
    day date NOT NULL,
    tag character varying(64) NOT NULL,
    chats integer NOT NULL
);


--
-- Name: votes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.votes (
    chat_pk integer NOT NULL,
    page_id integer NOT NULL,
    user_id character varying(128) NOT NULL,
    value integer NOT NULL,
    voted_at timestamp without time zone NOT NULL
);


--
-- Name: audit_log id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log ALTER COLUMN id SET DEFAULT nextval('public.audit_log_id_seq'::regclass);


--
-- Name: broadcasts id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.broadcasts ALTER COLUMN id SET DEFAULT nextval('public.broadcasts_id_seq'::regclass);


--
-- Name: chats id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chats ALTER COLUMN id SET DEFAULT nextval('public.chats_id_seq'::regclass);


--
-- Name: incidents id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.incidents ALTER COLUMN id SET DEFAULT nextval('public.incidents_id_seq'::regclass);


--
-- Name: outbox id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox ALTER COLUMN id SET DEFAULT nextval('public.outbox_id_seq'::regclass);


--
-- Name: page_events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_events ALTER COLUMN id SET DEFAULT nextval('public.page_events_id_seq'::regclass);


--
-- Name: pages id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages ALTER COLUMN id SET DEFAULT nextval('public.pages_id_seq'::regclass);


--
-- Name: slack_installations id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.slack_installations ALTER COLUMN id SET DEFAULT nextval('public.slack_installations_id_seq'::regclass);


--
-- Name: sources id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sources ALTER COLUMN id SET DEFAULT nextval('public.sources_id_seq'::regclass);


--
-- Data for Name: alembic_version; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.alembic_version VALUES ('0004_tag_followers');


--
-- Data for Name: alert_admins; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: audit_log; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: auth_failures; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: broadcasts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: chat_feeds; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: chat_pages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chat_pages VALUES (1, 3, 'f9354bded91e5832a675a6c8', '2026-12-07 01:28:31.337306');
INSERT INTO public.chat_pages VALUES (1, 7, 'fc6456eb31a1963818954784', '2026-12-07 01:28:47.880833');


--
-- Data for Name: chat_tags; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chat_tags VALUES (1, 'rl', 'any');


--
-- Data for Name: chat_weights; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: chats; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chats VALUES (1, 'telegram', '1001', 'private', NULL, 'active', 'daily', '09:00', 'UTC', 'en', 'rl', 2, '2026-12-07 09:00:00', NULL, NULL, '2026-12-07 01:28:13.390006', '2026-12-07 01:28:13.390006', 0, NULL, NULL, NULL, NULL, NULL);


--
-- Data for Name: incidents; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: leases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: outbox; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.outbox VALUES (1, 1, 'telegram', 'digest', '{"v":1,"pages":[[3,false]],"date":"2026-12-07","ranked":true}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:29:01.342081', NULL, '2026-12-07 01:28:31.529538', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:28:31.337306', NULL);
INSERT INTO public.outbox VALUES (2, 1, 'telegram', 'digest', '{"v":1,"pages":[[7,false]],"date":"2026-12-07","ranked":true}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:29:15.56236', NULL, '2026-12-07 01:28:48.101718', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:28:47.880833', NULL);


--
-- Data for Name: page_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.page_events VALUES (1, 3, 'new', 'f9354bded91e5832a675a6c8', '2026-12-07 01:28:24.513248');
INSERT INTO public.page_events VALUES (2, 7, 'new', 'fc6456eb31a1963818954784', '2026-12-07 01:28:42.02685');


--
-- Data for Name: page_tags; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.page_tags VALUES (1, 'rl', 0);
INSERT INTO public.page_tags VALUES (2, 'rl', 0);
INSERT INTO public.page_tags VALUES (3, 'rl', 0);
INSERT INTO public.page_tags VALUES (4, 'rl', 0);
INSERT INTO public.page_tags VALUES (5, 'rl', 0);
INSERT INTO public.page_tags VALUES (6, 'rl', 0);
INSERT INTO public.page_tags VALUES (7, 'rl', 0);


--
-- Data for Name: page_texts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.page_texts VALUES (1, 'en', 'Paper 1', 'TL;DR 1.');
INSERT INTO public.page_texts VALUES (2, 'en', 'Paper 2', 'TL;DR 2.');
INSERT INTO public.page_texts VALUES (3, 'en', 'Paper 3', 'TL;DR 3.');
INSERT INTO public.page_texts VALUES (4, 'en', 'Paper 1', 'TL;DR 1.');
INSERT INTO public.page_texts VALUES (5, 'en', 'Paper 2', 'TL;DR 2.');
INSERT INTO public.page_texts VALUES (6, 'en', 'Paper 3', 'TL;DR 3.');
INSERT INTO public.page_texts VALUES (7, 'en', 'Paper 4', 'TL;DR 4.');


--
-- Data for Name: pages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.pages VALUES (3, 1, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3', 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3.html', NULL, NULL, NULL, '2026-12-03', 'f9354bded91e5832a675a6c8', '2026-12-07 01:28:24.513248', '2026-12-07 01:28:24.513248', NULL, 'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3');
INSERT INTO public.pages VALUES (1, 1, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1', 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1.html', NULL, NULL, NULL, '2026-12-01', 'e03e0ca05af841d75ac02e26', '2026-12-07 01:28:17.709388', '2026-12-07 01:28:17.709388', NULL, 'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1');
INSERT INTO public.pages VALUES (2, 1, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2', 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2.html', NULL, NULL, NULL, '2026-12-02', '3af51bd1b87f6867327b2ce3', '2026-12-07 01:28:17.709388', '2026-12-07 01:28:17.709388', NULL, 'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2');
INSERT INTO public.pages VALUES (7, 2, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/4', 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/4.html', NULL, NULL, NULL, '2026-12-04', 'fc6456eb31a1963818954784', '2026-12-07 01:28:42.02685', '2026-12-07 01:28:42.02685', NULL, 'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/4');
INSERT INTO public.pages VALUES (4, 2, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1', 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1.html', NULL, NULL, NULL, '2026-12-01', 'e03e0ca05af841d75ac02e26', '2026-12-07 01:28:36.722998', '2026-12-07 01:28:36.722998', NULL, 'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/1');
INSERT INTO public.pages VALUES (5, 2, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2', 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2.html', NULL, NULL, NULL, '2026-12-02', '3af51bd1b87f6867327b2ce3', '2026-12-07 01:28:36.722998', '2026-12-07 01:28:36.722998', NULL, 'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/2');
INSERT INTO public.pages VALUES (6, 2, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3', 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3.html', NULL, NULL, NULL, '2026-12-03', 'f9354bded91e5832a675a6c8', '2026-12-07 01:28:36.722998', '2026-12-07 01:28:36.722998', NULL, 'path:http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/papers/3');


--
-- Data for Name: slack_installations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: slack_oauth_states; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: source_files; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: source_streaks; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: sources; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.sources VALUES (1, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/feed.atom?token=OldBuildTokenOLD1', 'feed', '2026-12-07 01:28:17.709388', '2026-12-07 01:28:24.513248', '2026-12-07 01:28:24.513248', NULL, NULL, NULL);
INSERT INTO public.sources VALUES (2, 'http://reader:OldBuildPassw0rd@127.0.0.1:18765/wiki/feed.atom?token=OldBuildTokenNEW2', 'feed', '2026-12-07 01:28:36.722998', '2026-12-07 01:28:42.02685', '2026-12-07 01:28:42.02685', NULL, NULL, NULL);


--
-- Data for Name: tag_followers; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: votes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: audit_log_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.audit_log_id_seq', 1, false);


--
-- Name: broadcasts_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.broadcasts_id_seq', 1, false);


--
-- Name: chats_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.chats_id_seq', 1, true);


--
-- Name: incidents_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.incidents_id_seq', 1, false);


--
-- Name: outbox_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.outbox_id_seq', 2, true);


--
-- Name: page_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.page_events_id_seq', 2, true);


--
-- Name: pages_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.pages_id_seq', 7, true);


--
-- Name: slack_installations_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.slack_installations_id_seq', 1, false);


--
-- Name: sources_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.sources_id_seq', 2, true);


--
-- Name: alembic_version alembic_version_pkc; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);


--
-- Name: alert_admins pk_alert_admins; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_admins
    ADD CONSTRAINT pk_alert_admins PRIMARY KEY (platform, user_id);


--
-- Name: audit_log pk_audit_log; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT pk_audit_log PRIMARY KEY (id);


--
-- Name: auth_failures pk_auth_failures; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_failures
    ADD CONSTRAINT pk_auth_failures PRIMARY KEY (platform);


--
-- Name: broadcasts pk_broadcasts; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.broadcasts
    ADD CONSTRAINT pk_broadcasts PRIMARY KEY (id);


--
-- Name: chat_feeds pk_chat_feeds; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_feeds
    ADD CONSTRAINT pk_chat_feeds PRIMARY KEY (chat_pk);


--
-- Name: chat_pages pk_chat_pages; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_pages
    ADD CONSTRAINT pk_chat_pages PRIMARY KEY (chat_pk, page_id);


--
-- Name: chat_tags pk_chat_tags; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_tags
    ADD CONSTRAINT pk_chat_tags PRIMARY KEY (chat_pk, tag);


--
-- Name: chat_weights pk_chat_weights; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_weights
    ADD CONSTRAINT pk_chat_weights PRIMARY KEY (chat_pk);


--
-- Name: chats pk_chats; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chats
    ADD CONSTRAINT pk_chats PRIMARY KEY (id);


--
-- Name: incidents pk_incidents; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.incidents
    ADD CONSTRAINT pk_incidents PRIMARY KEY (id);


--
-- Name: leases pk_leases; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.leases
    ADD CONSTRAINT pk_leases PRIMARY KEY (name);


--
-- Name: outbox pk_outbox; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT pk_outbox PRIMARY KEY (id);


--
-- Name: page_events pk_page_events; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_events
    ADD CONSTRAINT pk_page_events PRIMARY KEY (id);


--
-- Name: page_tags pk_page_tags; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_tags
    ADD CONSTRAINT pk_page_tags PRIMARY KEY (page_id, tag);


--
-- Name: page_texts pk_page_texts; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_texts
    ADD CONSTRAINT pk_page_texts PRIMARY KEY (page_id, lang);


--
-- Name: pages pk_pages; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages
    ADD CONSTRAINT pk_pages PRIMARY KEY (id);


--
-- Name: slack_installations pk_slack_installations; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.slack_installations
    ADD CONSTRAINT pk_slack_installations PRIMARY KEY (id);


--
-- Name: slack_oauth_states pk_slack_oauth_states; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.slack_oauth_states
    ADD CONSTRAINT pk_slack_oauth_states PRIMARY KEY (state_hash);


--
-- Name: source_files pk_source_files; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.source_files
    ADD CONSTRAINT pk_source_files PRIMARY KEY (source_id, path);


--
-- Name: source_streaks pk_source_streaks; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.source_streaks
    ADD CONSTRAINT pk_source_streaks PRIMARY KEY (name);


--
-- Name: sources pk_sources; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sources
    ADD CONSTRAINT pk_sources PRIMARY KEY (id);


--
-- Name: tag_followers pk_tag_followers; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tag_followers
    ADD CONSTRAINT pk_tag_followers PRIMARY KEY (day, tag);


--
-- Name: votes pk_votes; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT pk_votes PRIMARY KEY (chat_pk, page_id, user_id);


--
-- Name: chat_feeds uq_chat_feeds_token_hash; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_feeds
    ADD CONSTRAINT uq_chat_feeds_token_hash UNIQUE (token_hash);


--
-- Name: chats uq_chats_platform; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chats
    ADD CONSTRAINT uq_chats_platform UNIQUE (platform, chat_id);


--
-- Name: pages uq_pages_source_id; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages
    ADD CONSTRAINT uq_pages_source_id UNIQUE (source_id, key);


--
-- Name: slack_installations uq_slack_installations_enterprise_id; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.slack_installations
    ADD CONSTRAINT uq_slack_installations_enterprise_id UNIQUE (enterprise_id, team_id);


--
-- Name: sources uq_sources_name; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sources
    ADD CONSTRAINT uq_sources_name UNIQUE (name);


--
-- Name: ix_audit_log_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_audit_log_at ON public.audit_log USING btree (at);


--
-- Name: ix_chat_tags_tag; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_chat_tags_tag ON public.chat_tags USING btree (tag);


--
-- Name: ix_chats_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_chats_due ON public.chats USING btree (state, next_digest_at);


--
-- Name: ix_chats_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_chats_team ON public.chats USING btree (team_id);


--
-- Name: ix_incidents_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_incidents_open ON public.incidents USING btree (cleared_at);


--
-- Name: ix_outbox_broadcast; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_outbox_broadcast ON public.outbox USING btree (broadcast_id, status);


--
-- Name: ix_outbox_chat; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_outbox_chat ON public.outbox USING btree (chat_pk, status);


--
-- Name: ix_outbox_ready; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_outbox_ready ON public.outbox USING btree (status, priority DESC, not_before, id);


--
-- Name: ix_page_tags_tag; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_page_tags_tag ON public.page_tags USING btree (tag);


--
-- Name: ix_pages_paper; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_pages_paper ON public.pages USING btree (paper);


--
-- Name: ix_slack_oauth_states_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_slack_oauth_states_expires ON public.slack_oauth_states USING btree (expires_at);


--
-- Name: chats chat_pages_forget_chats; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER chat_pages_forget_chats AFTER DELETE ON public.chats REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION public.chat_pages_forget_chats();


--
-- Name: pages chat_pages_forget_pages; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER chat_pages_forget_pages AFTER DELETE ON public.pages REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION public.chat_pages_forget_pages();


--
-- Name: alert_admins fk_alert_admins_chat_pk_chats; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_admins
    ADD CONSTRAINT fk_alert_admins_chat_pk_chats FOREIGN KEY (chat_pk) REFERENCES public.chats(id) ON DELETE SET NULL;


--
-- Name: chat_feeds fk_chat_feeds_chat_pk_chats; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_feeds
    ADD CONSTRAINT fk_chat_feeds_chat_pk_chats FOREIGN KEY (chat_pk) REFERENCES public.chats(id) ON DELETE CASCADE;


--
-- Name: chat_tags fk_chat_tags_chat_pk_chats; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_tags
    ADD CONSTRAINT fk_chat_tags_chat_pk_chats FOREIGN KEY (chat_pk) REFERENCES public.chats(id) ON DELETE CASCADE;


--
-- Name: chat_weights fk_chat_weights_chat_pk_chats; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_weights
    ADD CONSTRAINT fk_chat_weights_chat_pk_chats FOREIGN KEY (chat_pk) REFERENCES public.chats(id) ON DELETE CASCADE;


--
-- Name: outbox fk_outbox_broadcast_id_broadcasts; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT fk_outbox_broadcast_id_broadcasts FOREIGN KEY (broadcast_id) REFERENCES public.broadcasts(id) ON DELETE SET NULL;


--
-- Name: outbox fk_outbox_chat_pk_chats; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT fk_outbox_chat_pk_chats FOREIGN KEY (chat_pk) REFERENCES public.chats(id) ON DELETE CASCADE;


--
-- Name: page_events fk_page_events_page_id_pages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_events
    ADD CONSTRAINT fk_page_events_page_id_pages FOREIGN KEY (page_id) REFERENCES public.pages(id) ON DELETE CASCADE;


--
-- Name: page_tags fk_page_tags_page_id_pages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_tags
    ADD CONSTRAINT fk_page_tags_page_id_pages FOREIGN KEY (page_id) REFERENCES public.pages(id) ON DELETE CASCADE;


--
-- Name: page_texts fk_page_texts_page_id_pages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_texts
    ADD CONSTRAINT fk_page_texts_page_id_pages FOREIGN KEY (page_id) REFERENCES public.pages(id) ON DELETE CASCADE;


--
-- Name: pages fk_pages_source_id_sources; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages
    ADD CONSTRAINT fk_pages_source_id_sources FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: source_files fk_source_files_source_id_sources; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.source_files
    ADD CONSTRAINT fk_source_files_source_id_sources FOREIGN KEY (source_id) REFERENCES public.sources(id) ON DELETE CASCADE;


--
-- Name: votes fk_votes_chat_pk_chats; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT fk_votes_chat_pk_chats FOREIGN KEY (chat_pk) REFERENCES public.chats(id) ON DELETE CASCADE;


--
-- Name: votes fk_votes_page_id_pages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT fk_votes_page_id_pages FOREIGN KEY (page_id) REFERENCES public.pages(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


