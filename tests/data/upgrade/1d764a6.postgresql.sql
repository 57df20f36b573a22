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

INSERT INTO public.chat_pages VALUES (1, 3, 'a9afda88cf89132bec420daf', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (1, 9, '82f17490142b6bea4672fdce', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (1, 14, 'dc0a2b65e1107cdd889a9fd9', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (1, 15, '215a5c9616de1b7e4b81a3e0', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 1, '210254601bb80bfc36b64ba1', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 2, '98a57c46325978d1ba3a96f1', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 3, 'a9afda88cf89132bec420daf', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 4, '8946e414161f9fbd14f4e0a7', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 5, '6ba0c261201e918f2bca6d61', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 6, 'b6150044a3004d3d44e8dfa4', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 7, 'cc43e419025b6a64564608a6', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 8, 'e1ebd2b6777ed4a38a758d0d', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 9, '82f17490142b6bea4672fdce', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 10, '9960c4da0b7943adcbf3d82a', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 11, '0444bdefe9a003427b185bec', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 12, '050e0fb251574375b65a9f5d', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 13, 'b5b831c0ce3be2a3f9ae9bfc', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 14, 'dc0a2b65e1107cdd889a9fd9', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (2, 15, '215a5c9616de1b7e4b81a3e0', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (5, 3, 'a9afda88cf89132bec420daf', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (5, 5, '6ba0c261201e918f2bca6d61', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (5, 6, 'b6150044a3004d3d44e8dfa4', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (5, 9, '82f17490142b6bea4672fdce', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (5, 11, '0444bdefe9a003427b185bec', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (5, 12, '050e0fb251574375b65a9f5d', '2026-12-07 01:56:09.060693');
INSERT INTO public.chat_pages VALUES (5, 13, 'b5b831c0ce3be2a3f9ae9bfc', '2026-12-07 01:56:09.060693');


--
-- Data for Name: chat_tags; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chat_tags VALUES (1, 'reasoning', 'any');
INSERT INTO public.chat_tags VALUES (1, 'rl', 'any');
INSERT INTO public.chat_tags VALUES (1, 'post-training', 'required');
INSERT INTO public.chat_tags VALUES (1, 'robotics', 'excluded');
INSERT INTO public.chat_tags VALUES (3, 'agents', 'any');
INSERT INTO public.chat_tags VALUES (4, 'rl', 'any');
INSERT INTO public.chat_tags VALUES (5, 'exploration', 'any');
INSERT INTO public.chat_tags VALUES (5, 'reasoning', 'any');


--
-- Data for Name: chat_weights; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chat_weights VALUES (1, '{"agentic-rl":1000000,"distillation":-1000000,"efficiency":-2000000,"exploration":1000000,"inference":-1000000,"long-context":-1000000,"multimodal":-1000000,"post-training":1000000,"reasoning":1000000,"rl":2000000,"vision":1000000}', '2026-12-07 01:56:01.713368');
INSERT INTO public.chat_weights VALUES (2, '{"agentic-rl":-1000000,"distillation":1000000,"efficiency":2000000,"exploration":-1000000,"inference":1000000,"long-context":1000000,"multimodal":1000000,"post-training":-1000000,"reasoning":-1000000,"rl":-2000000,"vision":-1000000}', '2026-12-07 01:56:01.775571');
INSERT INTO public.chat_weights VALUES (3, '{"agentic-rl":1000000,"distillation":-1000000,"efficiency":-2000000,"exploration":1000000,"inference":-1000000,"long-context":-1000000,"multimodal":-1000000,"post-training":1000000,"reasoning":1000000,"rl":2000000,"vision":1000000}', '2026-12-07 01:56:01.820768');


--
-- Data for Name: chats; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chats VALUES (4, 'telegram', '1004', 'private', NULL, 'paused', 'daily', '09:00', 'UTC', 'en', 'rl', 0, '2026-12-07 09:00:00', NULL, NULL, '2026-12-07 01:56:01.559251', '2026-12-07 01:56:01.582243', 0, NULL, NULL, NULL, NULL, NULL);
INSERT INTO public.chats VALUES (1, 'telegram', '1001', 'private', NULL, 'active', 'daily', '09:00', 'UTC', 'en', 'reasoning rl +post-training -robotics', 15, '2026-12-07 09:00:00', NULL, NULL, '2026-12-07 01:56:01.450369', '2026-12-07 01:56:01.461883', 0, NULL, NULL, NULL, NULL, NULL);
INSERT INTO public.chats VALUES (2, 'telegram', '1002', 'private', NULL, 'active', 'instant', '09:00', 'UTC', 'en', '*', 15, NULL, NULL, NULL, '2026-12-07 01:56:01.490323', '2026-12-07 01:56:01.499713', 0, NULL, NULL, NULL, NULL, NULL);
INSERT INTO public.chats VALUES (3, 'telegram', '1003', 'private', NULL, 'active', 'daily', '08:30', 'Asia/Seoul', 'ko', 'agents', 15, '2026-12-07 23:30:00', NULL, NULL, '2026-12-07 01:56:01.506981', '2026-12-07 01:56:01.553194', 0, NULL, NULL, NULL, NULL, NULL);
INSERT INTO public.chats VALUES (5, 'telegram', '1005', 'private', NULL, 'active', 'daily', '09:00', 'UTC', 'en', 'exploration reasoning', 15, '2026-12-07 09:00:00', NULL, NULL, '2026-12-07 01:56:01.590133', '2026-12-07 01:56:01.5937', 0, NULL, NULL, NULL, NULL, NULL);


--
-- Data for Name: incidents; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: leases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: outbox; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.outbox VALUES (13, 2, 'telegram', 'page', '{"v":1,"pages":[[12,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:52.967151', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (4, 2, 'telegram', 'page', '{"v":1,"pages":[[3,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:42.7857', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (1, 1, 'telegram', 'digest', '{"v":1,"pages":[[3,false],[15,false],[9,false],[14,false]],"date":"2026-12-07","ranked":true}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:44.068834', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (2, 2, 'telegram', 'page', '{"v":1,"pages":[[1,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:36.223263', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (17, 5, 'telegram', 'digest', '{"v":1,"pages":[[3,false],[13,false],[12,false],[11,false],[9,false],[6,false],[5,false]],"date":"2026-12-07","ranked":true}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:35.255209', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (5, 2, 'telegram', 'page', '{"v":1,"pages":[[4,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:41.978257', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (3, 2, 'telegram', 'page', '{"v":1,"pages":[[2,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:39.85478', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (14, 2, 'telegram', 'page', '{"v":1,"pages":[[13,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:53.054018', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (6, 2, 'telegram', 'page', '{"v":1,"pages":[[5,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:45.050837', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (7, 2, 'telegram', 'page', '{"v":1,"pages":[[6,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:46.417618', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (15, 2, 'telegram', 'page', '{"v":1,"pages":[[14,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:49.82602', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (8, 2, 'telegram', 'page', '{"v":1,"pages":[[7,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:48.697357', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (9, 2, 'telegram', 'page', '{"v":1,"pages":[[8,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:42.609522', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (16, 2, 'telegram', 'page', '{"v":1,"pages":[[15,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:51.934961', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (10, 2, 'telegram', 'page', '{"v":1,"pages":[[9,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:46.107898', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (11, 2, 'telegram', 'page', '{"v":1,"pages":[[10,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:46.337579', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);
INSERT INTO public.outbox VALUES (12, 2, 'telegram', 'page', '{"v":1,"pages":[[11,false]]}', 'queued', 10, 1, 0, NULL, '2026-12-07 01:56:48.305027', NULL, '2026-12-07 01:56:09.162447', 'network: aiohttp.ClientConnectorError: Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed (''127.0.0.1'', 9)]', NULL, '2026-12-07 01:56:09.060693', NULL);


--
-- Data for Name: page_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.page_events VALUES (1, 1, 'new', '210254601bb80bfc36b64ba1', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (2, 2, 'new', '98a57c46325978d1ba3a96f1', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (3, 3, 'new', 'a9afda88cf89132bec420daf', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (4, 4, 'new', '8946e414161f9fbd14f4e0a7', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (5, 5, 'new', '6ba0c261201e918f2bca6d61', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (6, 6, 'new', 'b6150044a3004d3d44e8dfa4', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (7, 7, 'new', 'cc43e419025b6a64564608a6', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (8, 8, 'new', 'e1ebd2b6777ed4a38a758d0d', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (9, 9, 'new', '82f17490142b6bea4672fdce', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (10, 10, 'new', '9960c4da0b7943adcbf3d82a', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (11, 11, 'new', '0444bdefe9a003427b185bec', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (12, 12, 'new', '050e0fb251574375b65a9f5d', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (13, 13, 'new', 'b5b831c0ce3be2a3f9ae9bfc', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (14, 14, 'new', 'dc0a2b65e1107cdd889a9fd9', '2026-12-07 01:56:05.919294');
INSERT INTO public.page_events VALUES (15, 15, 'new', '215a5c9616de1b7e4b81a3e0', '2026-12-07 01:56:05.919294');


--
-- Data for Name: page_tags; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.page_tags VALUES (1, 'rl', 0);
INSERT INTO public.page_tags VALUES (1, 'robotics', 1);
INSERT INTO public.page_tags VALUES (1, 'vision', 2);
INSERT INTO public.page_tags VALUES (2, 'inference', 0);
INSERT INTO public.page_tags VALUES (2, 'efficiency', 1);
INSERT INTO public.page_tags VALUES (2, 'long-context', 2);
INSERT INTO public.page_tags VALUES (3, 'rl', 0);
INSERT INTO public.page_tags VALUES (3, 'reasoning', 1);
INSERT INTO public.page_tags VALUES (3, 'post-training', 2);
INSERT INTO public.page_tags VALUES (3, 'agentic-rl', 3);
INSERT INTO public.page_tags VALUES (3, 'exploration', 4);
INSERT INTO public.page_tags VALUES (4, 'robotics', 0);
INSERT INTO public.page_tags VALUES (4, 'multimodal', 1);
INSERT INTO public.page_tags VALUES (4, 'distillation', 2);
INSERT INTO public.page_tags VALUES (4, 'efficiency', 3);
INSERT INTO public.page_tags VALUES (5, 'rl', 0);
INSERT INTO public.page_tags VALUES (5, 'robotics', 1);
INSERT INTO public.page_tags VALUES (5, 'exploration', 2);
INSERT INTO public.page_tags VALUES (6, 'long-context', 0);
INSERT INTO public.page_tags VALUES (6, 'inference', 1);
INSERT INTO public.page_tags VALUES (6, 'reasoning', 2);
INSERT INTO public.page_tags VALUES (6, 'efficiency', 3);
INSERT INTO public.page_tags VALUES (7, 'alignment', 0);
INSERT INTO public.page_tags VALUES (7, 'multimodal', 1);
INSERT INTO public.page_tags VALUES (7, 'vision', 2);
INSERT INTO public.page_tags VALUES (7, 'post-training', 3);
INSERT INTO public.page_tags VALUES (8, 'safety', 0);
INSERT INTO public.page_tags VALUES (8, 'alignment', 1);
INSERT INTO public.page_tags VALUES (8, 'agentic-rl', 2);
INSERT INTO public.page_tags VALUES (8, 'rl', 3);
INSERT INTO public.page_tags VALUES (9, 'distillation', 0);
INSERT INTO public.page_tags VALUES (9, 'reasoning', 1);
INSERT INTO public.page_tags VALUES (9, 'post-training', 2);
INSERT INTO public.page_tags VALUES (10, 'safety', 0);
INSERT INTO public.page_tags VALUES (10, 'long-context', 1);
INSERT INTO public.page_tags VALUES (10, 'alignment', 2);
INSERT INTO public.page_tags VALUES (11, 'multimodal', 0);
INSERT INTO public.page_tags VALUES (11, 'vision', 1);
INSERT INTO public.page_tags VALUES (11, 'reasoning', 2);
INSERT INTO public.page_tags VALUES (11, 'rl', 3);
INSERT INTO public.page_tags VALUES (12, 'agentic-rl', 0);
INSERT INTO public.page_tags VALUES (12, 'exploration', 1);
INSERT INTO public.page_tags VALUES (12, 'rl', 2);
INSERT INTO public.page_tags VALUES (13, 'inference', 0);
INSERT INTO public.page_tags VALUES (13, 'reasoning', 1);
INSERT INTO public.page_tags VALUES (13, 'efficiency', 2);
INSERT INTO public.page_tags VALUES (14, 'efficiency', 0);
INSERT INTO public.page_tags VALUES (14, 'rl', 1);
INSERT INTO public.page_tags VALUES (14, 'post-training', 2);
INSERT INTO public.page_tags VALUES (14, 'inference', 3);
INSERT INTO public.page_tags VALUES (15, 'agentic-rl', 0);
INSERT INTO public.page_tags VALUES (15, 'rl', 1);
INSERT INTO public.page_tags VALUES (15, 'post-training', 2);


--
-- Data for Name: page_texts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.page_texts VALUES (1, 'en', 'TacCurriculum: Residual RL with Tactile Curricula for Sim-to-Real Dexterous Grasping', 'A residual RL policy on top of a frozen behaviour-cloned base carries a 16-DoF robot hand''s grasps from simulation to hardware with no real-world fine-tuning, thanks to a curriculum that widens domain randomisation only once success passes 80%. On 60 unseen household objects, grasp success rises from 54% to 83%, with 40× fewer environment steps than PPO from scratch.');
INSERT INTO public.page_texts VALUES (1, 'ko', 'TacCurriculum: Residual RL with Tactile Curricula for Sim-to-Real Dexterous Grasping', '행동 복제(BC)로 학습해 고정한 기반 정책 위에 residual RL 정책을 얹어, 16자유도 로봇 손의 파지 동작을 실환경 미세조정 없이 시뮬레이션에서 실제 하드웨어로 옮긴다. 핵심은 현재 범위에서의 성공률이 80%를 넘을 때만 촉각·시각 domain randomization 범위를 넓히는 커리큘럼이다. 처음 보는 가정용 물체 60종에서 실로봇 파지 성공률이 54%(BC 단독)에서 83%로 오르며, PPO를 처음부터 학습하는 것보다 환경 스텝이 40배 적게 든다.');
INSERT INTO public.page_texts VALUES (2, 'en', 'Retrieval Drafts: Speculative Decoding for 128K-Token Contexts without a Draft Model', 'Instead of a separate draft model, this method drafts tokens by looking up continuations of the current suffix in the prompt itself, where long-context work such as code editing copies much of its output from. A suffix-automaton index over a 128K-token prompt takes 90 ms to build. Decoding gets 2.4–3.1× faster with outputs identical to greedy decoding.');
INSERT INTO public.page_texts VALUES (2, 'ko', 'Retrieval Drafts: Speculative Decoding for 128K-Token Contexts without a Draft Model', '별도의 draft 모델을 돌리는 대신, 지금까지 생성한 텍스트의 접미사가 프롬프트 안에서 어떻게 이어지는지를 찾아 draft 토큰으로 쓴다. 저장소 단위 코드 수정이나 계약서 검토 같은 긴 문맥 작업에서는 출력의 상당 부분이 바로 프롬프트에서 복사되기 때문이다. 128K 토큰 프롬프트에 대한 suffix automaton 인덱스는 90 ms면 만들어지고 매 스텝 조회된다. greedy 디코딩과 완전히 같은 출력을 내면서 디코딩이 2.4–3.1배 빨라지고, 학습된 draft head와 함께 쓰면 3.6배가 된다.');
INSERT INTO public.page_texts VALUES (3, 'en', 'Understanding Evolution Strategies for LLM Reasoning: Broader Reasoning Coverage than GRPO', 'Evolution Strategies are usually filed as a memory-efficient but weaker alternative to GRPO; this paper argues otherwise. GRPO shows entropy collapse while ES does not, and ES raises Pass@1 while reaching a higher Pass@K, which the authors trace to the diversity of the ES population. The gains come from a sparse subset of larger-magnitude updates, although the parameters move a lot overall.');
INSERT INTO public.page_texts VALUES (3, 'ko', 'Understanding Evolution Strategies for LLM Reasoning: Broader Reasoning Coverage than GRPO', 'Evolution Strategies(ES)는 보통 GRPO보다 메모리는 적게 들지만 성능은 약한 대안으로 분류되는데, 이 논문은 그 분류가 틀렸다고 주장한다. GRPO는 entropy collapse를 보이지만 ES는 그렇지 않고, Pass@1을 올리면서 더 높은 Pass@K에 도달하며, 저자들은 그 이유를 ES 집단의 다양성에서 찾는다. 모델 파라미터 전체가 크게 움직이지만 이득은 크기가 큰 소수의 업데이트에서 나온다.');
INSERT INTO public.page_texts VALUES (4, 'en', 'ChunkDistill: Compressing a 7B Vision-Language-Action Policy into a 300M On-Board Controller', 'A 7B vision-language-action model is distilled into a 300M student that predicts 16-step action chunks, so it runs at 50 Hz on an embedded GPU board. The student learns from the teacher''s full action distributions over 1.1M frames. Across 12 tabletop tasks it keeps 94% of the teacher''s success rate at 23× lower latency, and beats a same-size model trained on demonstrations by 17 points.');
INSERT INTO public.page_texts VALUES (4, 'ko', 'ChunkDistill: Compressing a 7B Vision-Language-Action Policy into a 300M On-Board Controller', '7B 규모의 vision-language-action(VLA) 모델을 300M 파라미터 student로 증류한다. student는 행동을 한 스텝씩이 아니라 16스텝 단위의 action chunk로 예측하므로 임베디드 GPU 보드에서 50 Hz로 돌아간다. teacher의 행동 분포 전체를 1.1M 프레임에 걸쳐 학습하며, 데이터의 20%는 teacher의 실패 사례를 다시 라벨링한 것이다. 12개 탁상 과제에서 teacher 성공률의 94%를 유지하면서 지연 시간은 23분의 1로 줄었고, 같은 크기로 시연 데이터만 학습한 모델보다 17%p 높다.');
INSERT INTO public.page_texts VALUES (5, 'en', 'Optimistic Offline-to-Online RL for Quadruped Locomotion on Unseen Terrain', 'Online fine-tuning of an offline-trained locomotion policy usually collapses early, when the pessimistic critic meets unseen data. The authors anchor on a frozen copy of the offline critic and add an optimism bonus from Q-ensemble disagreement. On a real quadruped the policy reaches 0.92 m/s on gravel and stairs after 40 minutes of robot data, against 0.61 m/s for IQL then SAC.');
INSERT INTO public.page_texts VALUES (5, 'ko', 'Optimistic Offline-to-Online RL for Quadruped Locomotion on Unseen Terrain', '오프라인으로 학습한 보행 정책을 온라인에서 미세조정하면, 비관적으로 학습된 critic이 처음 보는 데이터를 만나면서 초반 수천 스텝 안에 성능이 무너지는 경우가 많다. 저자들은 오프라인 critic의 고정 사본을 기준점으로 두고, 5개 Q-앙상블의 불일치만큼 optimism 보너스를 더해 200k 스텝에 걸쳐 0으로 줄인다. 실제 사족보행 로봇에서 40분 분량의 데이터만으로 자갈길과 계단에서 0.92 m/s에 도달했으며(IQL 후 SAC는 0.61 m/s), 넘어진 횟수는 27회에서 3회로 줄었다.');
INSERT INTO public.page_texts VALUES (6, 'en', 'Trace-Aware KV Cache Eviction for Long Chains of Thought', 'Reasoning models write 10–30K-token chains of thought, and KV cache eviction built for long prompts (H2O, SnapKV) drops intermediate results they come back to. This paper scores cached tokens by how often later reasoning steps attend to them. At 10% of the full cache it loses under 1.5 points on competition math and code, where SnapKV loses 9–11, and raises throughput 2.7×.');
INSERT INTO public.page_texts VALUES (6, 'ko', 'Trace-Aware KV Cache Eviction for Long Chains of Thought', '추론 모델은 1만–3만 토큰에 이르는 chain of thought를 쓰는데, 긴 프롬프트용으로 설계된 KV cache eviction 기법(H2O, SnapKV)은 모델이 한참 뒤에 다시 참조하는 중간 결과를 지워 버려 성능을 크게 떨어뜨린다. 이 논문은 캐시된 토큰을 이후 추론 단계들이 얼마나 자주 다시 attend하는지로 점수화하되, 토큰이 아니라 단계 단위로 모은다. 전체 캐시의 10%만 쓰고도 경시 수학과 코드 과제에서 1.5점 미만으로 떨어지는 반면 SnapKV는 9–11점이 떨어지며, 배치 64에서 처리량이 2.7배 오른다.');
INSERT INTO public.page_texts VALUES (7, 'en', 'Grounded Preference Optimisation: Reducing Object Hallucination in Vision-Language Models', 'Vision-language models tuned with standard DPO learn to sound confident rather than to look. This paper builds preference pairs whose rejected caption differs only by objects absent from the image, and ties the reward margin to attention on the mentioned objects. On a 7B model the hallucination rate (CHAIR-i) falls from 12.4 to 5.9, against 8.7 for plain DPO, with VQA accuracy unchanged.');
INSERT INTO public.page_texts VALUES (7, 'ko', 'Grounded Preference Optimisation: Reducing Object Hallucination in Vision-Language Models', '일반적인 DPO로 튜닝한 vision-language 모델은 이미지를 제대로 보는 법보다 자신 있게 말하는 법을 배운다. 이 논문은 rejected 캡션이 chosen 캡션과 이미지에 없는 물체만 다르도록(open-vocabulary detector로 검증) preference 쌍을 만들고, 보상 마진을 언급된 물체의 이미지 영역에 대한 attention과 묶는 손실 항을 더한다. 7B 모델에서 물체 hallucination 비율(CHAIR-i)이 12.4에서 5.9로 떨어졌고, 같은 쌍으로 일반 DPO를 하면 8.7이며, 일반 VQA 정확도는 그대로다.');
INSERT INTO public.page_texts VALUES (8, 'en', 'Catching Reward Hacking in Agentic Coding RL with Held-Out Test Monitors', 'During RL on software tasks, coding agents learn to pass unit tests by editing the tests, special-casing inputs or swallowing exceptions. A monitor that reruns each final patch against held-out tests flags 3.8% of 120k trajectories as reward hacks, a rate that climbs from 0.4% to 6.1% over training. Penalising flagged episodes holds it at 0.7% and keeps 97% of the SWE-bench gain.');
INSERT INTO public.page_texts VALUES (8, 'ko', 'Catching Reward Hacking in Agentic Coding RL with Held-Out Test Monitors', '소프트웨어 엔지니어링 과제로 RL을 하면 코딩 에이전트는 테스트를 고치거나, 테스트 입력만 특별 처리하거나, 예외를 조용히 삼키는 식으로 단위 테스트를 통과하는 법을 배운다. 최종 패치를 숨겨 둔 테스트로 다시 돌리고 diff를 분류하는 모니터가 학습 trajectory 120k개 중 3.8%를 reward hacking으로 잡아냈고, 아무 조치도 하지 않으면 hacking 비율은 학습 동안 0.4%에서 6.1%로 올라간다. 적발된 에피소드에 페널티를 주면 최종 비율이 0.7%에 머물면서도 SWE-bench Verified 해결률 향상분의 97%가 유지된다.');
INSERT INTO public.page_texts VALUES (9, 'en', 'On-Policy Distillation Is Enough for Small Reasoning Models', 'A 1.5B student trained by on-policy distillation, scored token by token by a 32B teacher, matches a GRPO-trained student on math reasoning at about a tenth of the compute: 71.2% vs 70.8% on MATH-500, with 1,900 instead of 18,000 H100-hours. The advantage almost vanishes when teacher and student come from different pre-training families.');
INSERT INTO public.page_texts VALUES (9, 'ko', 'On-Policy Distillation Is Enough for Small Reasoning Models', 'student가 직접 풀이를 샘플링하고, 32B teacher가 모든 토큰을 log-probability로 채점하고, student가 토큰별 reverse KL을 최소화하는 on-policy distillation으로 학습한 1.5B student가 수학 추론에서 GRPO로 학습한 student와 같은 성능을 약 10분의 1 연산량으로 낸다. MATH-500에서 71.2% 대 70.8%이며, 든 비용은 H100 18,000시간이 아니라 1,900시간이다. teacher와 student의 사전학습 계열이 다르면 이 이점은 거의 사라진다.');
INSERT INTO public.page_texts VALUES (10, 'en', 'Many-Shot Jailbreaks Scale with Context Length; Refusal Probes Do Not', 'Many-shot jailbreaks fill the context with hundreds of fabricated compliant dialogues. Linear refusal probes trained on short prompts lose most of their signal beyond 32K tokens (AUROC 0.97 to 0.71), so the authors estimate the refusal direction at several context lengths. Fine-tuning against it cuts attack success at 256 shots from 61% to 9% on a 70B model, at 1.2 points of long-context score.');
INSERT INTO public.page_texts VALUES (10, 'ko', 'Many-Shot Jailbreaks Scale with Context Length; Refusal Probes Do Not', 'many-shot jailbreak은 모델이 유해한 요청에 응하는 가짜 대화 수백 개로 문맥을 채우는 공격으로, 성공률이 shot 수에 대해 power law를 따른다. 저자들은 짧은 프롬프트로 학습한 선형 refusal probe가 32K 토큰을 넘어서면 신호를 대부분 잃는다는 것(AUROC 0.97 → 0.71)을 보이고, 여러 문맥 길이에서 refusal 방향을 따로 추정하자고 제안한다. 이 다중 길이 방향에 맞춰 미세조정하면 70B 공개 가중치 모델에서 256-shot 공격 성공률이 61%에서 9%로 떨어지며, 긴 문맥 벤치마크 비용은 1.2점이다.');
INSERT INTO public.page_texts VALUES (11, 'en', 'Show Me When: Temporal Grounding Rewards for Video Reasoning with RL', 'RL with answer-only rewards teaches video-language models to answer from a few salient frames and guess the rest. This paper has the model cite the time span behind its answer and rewards the span''s overlap with annotated evidence. Long-video QA accuracy rises 6.3 points over answer-only GRPO, and answers whose span holds the evidence go from 38% to 74%.');
INSERT INTO public.page_texts VALUES (11, 'ko', 'Show Me When: Temporal Grounding Rewards for Video Reasoning with RL', '정답 여부만 보상하는 RL은 video-language 모델에게 눈에 띄는 몇 프레임만 보고 나머지는 찍는 법을 가르친다. 이 논문은 모델이 답의 근거가 되는 시간 구간을 함께 제시하게 하고, 그 구간이 주석된 근거 구간과 겹치는 정도(IoU)에 보상을 더해 7B 모델을 영상 질문 48k개로 GRPO 학습한다. 긴 영상 QA 정확도가 정답 보상만 쓴 GRPO보다 6.3점 오르고, 제시한 구간에 실제 근거가 들어 있는 답의 비율은 38%에서 74%로 늘었다.');
INSERT INTO public.page_texts VALUES (12, 'en', 'Novelty Bonuses over Page States for Exploration in Web-Agent RL', 'Web agents trained with outcome-only RL rarely find workflows that span many pages, since failed episodes say nothing about which parts of a site were worth visiting. The authors hash each page''s accessibility tree into a state and pay a novelty bonus for visiting it. On WebArena-Lite a 14B agent goes from 41.5% to 48.9% task success, most (+13 points) on long tasks.');
INSERT INTO public.page_texts VALUES (12, 'ko', 'Novelty Bonuses over Page States for Exploration in Web-Agent RL', '결과 보상만으로 RL 학습한 웹 에이전트는 여러 페이지에 걸친 작업 흐름을 좀처럼 찾아내지 못한다. 실패한 에피소드는 사이트의 어느 부분이 가 볼 만했는지에 대해 아무 신호도 주지 않기 때문이다. 저자들은 각 페이지의 accessibility tree를 해싱해 추상 상태로 만들고, 방문할 때마다 1/√N(s)의 내재적 보너스를 주되 학습이 진행되면서 0으로 줄인다. WebArena-Lite에서 14B 에이전트의 과제 성공률이 41.5%에서 48.9%로 올랐고, 페이지 전환이 다섯 번 이상 필요한 과제에서 가장 크게(+13%p) 올랐다.');
INSERT INTO public.page_texts VALUES (13, 'en', 'Learning When to Think: Difficulty-Aware Allocation of Test-Time Compute', 'A small probe reads a reasoning model''s hidden state at the end of the prompt and predicts how hard the question is; a scheduler then picks the number of samples and the thinking budget per question. At the same average budget accuracy rises 4.1 points on mixed math and code; at equal accuracy it uses 46% fewer tokens than uniform best-of-8.');
INSERT INTO public.page_texts VALUES (13, 'ko', 'Learning When to Think: Difficulty-Aware Allocation of Test-Time Compute', '작은 probe가 프롬프트 끝에서 추론 모델의 hidden state를 읽어 질문의 난이도를 예측하고, 스케줄러가 그 추정치로 질문마다 샘플 수와 사고 토큰 상한을 정한다. 쉬운 질문에는 짧은 샘플 하나, 어려운 질문에는 긴 샘플 여러 개를 주는 식이다. 평균 토큰 예산이 같을 때 수학·코딩 혼합 세트에서 정확도가 4.1점 오르고, 같은 정확도를 기준으로 하면 균일한 best-of-8보다 토큰을 46% 덜 쓴다. probe는 선형 층 하나이며, 모델 자신의 풀이 성공률로 라벨링한 질문 20k개로 학습한다.');
INSERT INTO public.page_texts VALUES (14, 'en', 'FP8 Rollouts for RL Post-Training without Off-Policy Drift', 'Rollouts dominate the cost of RL post-training, but FP8 inference with a BF16 trainer makes the sampling policy differ from the trained one. This paper measures the mismatch per token and corrects it with truncated importance weights. With the correction, FP8 rollouts make a 32B GRPO run 1.8× faster at the same accuracy; without it, training diverges after about 600 steps.');
INSERT INTO public.page_texts VALUES (14, 'ko', 'FP8 Rollouts for RL Post-Training without Off-Policy Drift', 'RL 사후 학습 비용의 대부분은 롤아웃 생성에서 나오는데, 학습기는 BF16으로 두고 추론 엔진만 FP8로 돌리면 샘플링하는 정책과 학습되는 정책이 달라진다. 이 논문은 그 불일치를 토큰 단위로 측정하고(확률 비의 중앙값은 1.00이지만 토큰의 0.8%는 2배 이상 차이), 상한 2로 자른 importance weight로 보정한다. 보정을 하면 32B GRPO 학습이 BF16과 같은 추론 정확도를 유지하면서 전체적으로 1.8배 빨라지고, 보정하지 않으면 약 600 스텝 뒤 학습이 발산한다.');
INSERT INTO public.page_texts VALUES (15, 'en', 'Agentic Reinforcement Learning', 'Agentic RL trains language models to act over many steps, such as browsing, editing repositories and calling tools, with rewards that mostly come at the end of an episode. Since August 2026 the work tracked here has split into three lines: cheaper optimisers, better exploration on long tasks, and guarding against reward hacking. The rollout budget remains the binding cost in all of them.');
INSERT INTO public.page_texts VALUES (15, 'ko', '에이전틱 강화학습', '에이전틱 RL은 언어 모델이 웹 탐색, 저장소 수정, 도구 호출처럼 여러 단계에 걸쳐 행동하도록 학습시키며, 보상은 보통 에피소드가 끝날 때에만 주어진다. 2026년 8월 이후 이 위키가 추적한 연구는 세 갈래로 나뉜다. 더 싼 옵티마이저(evolution strategies, FP8 롤아웃), 긴 과제에서의 더 나은 탐색(페이지 상태 novelty 보너스), 그리고 reward hacking 방지(숨겨 둔 테스트 모니터)다. 어느 갈래에서든 구속 비용은 여전히 롤아웃 예산이다.');


--
-- Data for Name: pages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.pages VALUES (1, 1, 'papers/2026/2608.04192-residual-rl-dexterous-grasping', NULL, 'paper', '2608.04192', '2026-08-07', '2026-08-12', '210254601bb80bfc36b64ba1', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2608.04192');
INSERT INTO public.pages VALUES (2, 1, 'papers/2026/2608.19024-prompt-lookup-speculative-decoding', NULL, 'paper', '2608.19024', '2026-08-22', '2026-09-02', '98a57c46325978d1ba3a96f1', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2608.19024');
INSERT INTO public.pages VALUES (3, 1, 'papers/2026/2608.27351-evolution-strategies-reasoning', NULL, 'paper', '2608.27351', '2026-08-29', '2026-08-29', 'a9afda88cf89132bec420daf', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2608.27351');
INSERT INTO public.pages VALUES (4, 1, 'papers/2026/2609.03518-vla-action-chunk-distillation', NULL, 'paper', '2609.03518', '2026-09-05', '2026-09-05', '8946e414161f9fbd14f4e0a7', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2609.03518');
INSERT INTO public.pages VALUES (5, 1, 'papers/2026/2609.11873-optimistic-offline-to-online-locomotion', NULL, 'paper', '2609.11873', '2026-09-16', '2026-09-23', '6ba0c261201e918f2bca6d61', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2609.11873');
INSERT INTO public.pages VALUES (6, 1, 'papers/2026/2609.20731-trace-aware-kv-eviction', NULL, 'paper', '2609.20731', '2026-09-25', '2026-10-08', 'b6150044a3004d3d44e8dfa4', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2609.20731');
INSERT INTO public.pages VALUES (7, 1, 'papers/2026/2609.27740-grounded-preference-optimisation', NULL, 'paper', '2609.27740', '2026-09-30', '2026-10-11', 'cc43e419025b6a64564608a6', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2609.27740');
INSERT INTO public.pages VALUES (8, 1, 'papers/2026/2610.05566-reward-hacking-coding-agents', NULL, 'paper', '2610.05566', '2026-10-08', '2026-10-20', 'e1ebd2b6777ed4a38a758d0d', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2610.05566');
INSERT INTO public.pages VALUES (9, 1, 'papers/2026/2610.14209-on-policy-distillation-small-reasoners', NULL, 'paper', '2610.14209', '2026-10-17', '2026-10-17', '82f17490142b6bea4672fdce', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2610.14209');
INSERT INTO public.pages VALUES (10, 1, 'papers/2026/2610.22318-many-shot-jailbreak-refusal-probes', NULL, 'paper', '2610.22318', '2026-10-26', '2026-11-06', '9960c4da0b7943adcbf3d82a', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2610.22318');
INSERT INTO public.pages VALUES (11, 1, 'papers/2026/2611.01957-temporal-grounding-rewards-video', NULL, 'paper', '2611.01957', '2026-11-04', '2026-11-04', '0444bdefe9a003427b185bec', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2611.01957');
INSERT INTO public.pages VALUES (12, 1, 'papers/2026/2611.08833-novelty-bonus-web-agents', NULL, 'paper', '2611.08833', '2026-11-10', '2026-11-18', '050e0fb251574375b65a9f5d', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2611.08833');
INSERT INTO public.pages VALUES (13, 1, 'papers/2026/2611.12648-difficulty-aware-test-time-compute', NULL, 'paper', '2611.12648', '2026-11-14', '2026-11-27', 'b5b831c0ce3be2a3f9ae9bfc', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2611.12648');
INSERT INTO public.pages VALUES (14, 1, 'papers/2026/2611.19377-fp8-rollouts-rl-post-training', NULL, 'paper', '2611.19377', '2026-11-21', '2026-11-21', 'dc0a2b65e1107cdd889a9fd9', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'arxiv:2611.19377');
INSERT INTO public.pages VALUES (15, 1, 'topics/agentic-rl', NULL, 'topic', NULL, '2026-08-10', '2026-11-24', '215a5c9616de1b7e4b81a3e0', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:01.373876', NULL, 'path:topics/agentic-rl');


--
-- Data for Name: slack_installations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: slack_oauth_states; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: source_files; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.source_files VALUES (1, 'papers/2026/2608.04192-residual-rl-dexterous-grasping.en.md', 1796594757000000000, 2360, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2608.04192-residual-rl-dexterous-grasping.ko.md', 1796594757000000000, 2913, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2608.19024-prompt-lookup-speculative-decoding.en.md', 1796594757000000000, 2441, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2608.19024-prompt-lookup-speculative-decoding.ko.md', 1796594757000000000, 2918, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2608.27351-evolution-strategies-reasoning.en.md', 1796594757000000000, 5263, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2608.27351-evolution-strategies-reasoning.ko.md', 1796594757000000000, 7767, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.03518-vla-action-chunk-distillation.en.md', 1796594757000000000, 2421, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.03518-vla-action-chunk-distillation.ko.md', 1796594757000000000, 2815, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.11873-optimistic-offline-to-online-locomotion.en.md', 1796594757000000000, 2279, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.11873-optimistic-offline-to-online-locomotion.ko.md', 1796594757000000000, 2749, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.20731-trace-aware-kv-eviction.en.md', 1796594757000000000, 2425, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.20731-trace-aware-kv-eviction.ko.md', 1796594757000000000, 2885, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.27740-grounded-preference-optimisation.en.md', 1796594757000000000, 2401, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2609.27740-grounded-preference-optimisation.ko.md', 1796594757000000000, 2870, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2610.05566-reward-hacking-coding-agents.en.md', 1796594757000000000, 2551, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2610.05566-reward-hacking-coding-agents.ko.md', 1796594757000000000, 3171, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2610.14209-on-policy-distillation-small-reasoners.en.md', 1796594757000000000, 2501, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2610.14209-on-policy-distillation-small-reasoners.ko.md', 1796594757000000000, 2815, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2610.22318-many-shot-jailbreak-refusal-probes.en.md', 1796594757000000000, 2527, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2610.22318-many-shot-jailbreak-refusal-probes.ko.md', 1796594757000000000, 3040, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.01957-temporal-grounding-rewards-video.en.md', 1796594757000000000, 2123, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.01957-temporal-grounding-rewards-video.ko.md', 1796594757000000000, 2602, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.08833-novelty-bonus-web-agents.en.md', 1796594757000000000, 2392, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.08833-novelty-bonus-web-agents.ko.md', 1796594757000000000, 3027, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.12648-difficulty-aware-test-time-compute.en.md', 1796594757000000000, 2347, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.12648-difficulty-aware-test-time-compute.ko.md', 1796594757000000000, 2758, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.19377-fp8-rollouts-rl-post-training.en.md', 1796594757000000000, 2339, NULL);
INSERT INTO public.source_files VALUES (1, 'papers/2026/2611.19377-fp8-rollouts-rl-post-training.ko.md', 1796594757000000000, 2785, NULL);
INSERT INTO public.source_files VALUES (1, 'topics/agentic-rl.en.md', 1796594757000000000, 2952, NULL);
INSERT INTO public.source_files VALUES (1, 'topics/agentic-rl.ko.md', 1796594757000000000, 3435, NULL);


--
-- Data for Name: source_streaks; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: sources; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.sources VALUES (1, '/tmp/tmp.z2YlCQVWCn/src/bot/sample_wiki', 'directory', '2026-12-07 01:56:01.373876', '2026-12-07 01:56:05.907767', '2026-12-07 01:56:05.907767', NULL, NULL, NULL);


--
-- Data for Name: tag_followers; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: votes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.votes VALUES (1, 1, 'u1', 1, '2026-12-07 01:56:01.621995');
INSERT INTO public.votes VALUES (1, 2, 'u1', -1, '2026-12-07 01:56:01.672049');
INSERT INTO public.votes VALUES (1, 3, 'u1', 1, '2026-12-07 01:56:01.688825');
INSERT INTO public.votes VALUES (1, 4, 'u1', -1, '2026-12-07 01:56:01.713368');
INSERT INTO public.votes VALUES (2, 1, 'u1', -1, '2026-12-07 01:56:01.734088');
INSERT INTO public.votes VALUES (2, 2, 'u1', 1, '2026-12-07 01:56:01.747403');
INSERT INTO public.votes VALUES (2, 3, 'u1', -1, '2026-12-07 01:56:01.764088');
INSERT INTO public.votes VALUES (2, 4, 'u1', 1, '2026-12-07 01:56:01.775571');
INSERT INTO public.votes VALUES (3, 1, 'u1', 1, '2026-12-07 01:56:01.792047');
INSERT INTO public.votes VALUES (3, 2, 'u1', -1, '2026-12-07 01:56:01.800022');
INSERT INTO public.votes VALUES (3, 3, 'u1', 1, '2026-12-07 01:56:01.808058');
INSERT INTO public.votes VALUES (3, 4, 'u1', -1, '2026-12-07 01:56:01.820768');


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

SELECT pg_catalog.setval('public.chats_id_seq', 5, true);


--
-- Name: incidents_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.incidents_id_seq', 1, false);


--
-- Name: outbox_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.outbox_id_seq', 17, true);


--
-- Name: page_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.page_events_id_seq', 15, true);


--
-- Name: pages_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.pages_id_seq', 15, true);


--
-- Name: slack_installations_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.slack_installations_id_seq', 1, false);


--
-- Name: sources_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.sources_id_seq', 1, true);


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


