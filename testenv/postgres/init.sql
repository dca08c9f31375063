-- Prepares the testenv's PostgreSQL cluster for FerretDB. testenv/up runs this once per fresh
-- cluster, as the superuser, connected to template1: every database created afterwards (the
-- shared server's `ferretdb`, each private test server's) is a copy of template1 and so gets
-- the triggers below too.

-- FerretDB connects as this role; CREATEDB lets tests create their private servers' databases.
CREATE ROLE ferretdb LOGIN CREATEDB;

-- Why GIN twins. FerretDB's PostgreSQL handler keeps each document in the jsonb column
-- `_jsonb` and pushes a top-level equality filter down as `_jsonb->'field' @> value`
-- (containment, so that a value also matches an array holding it, as in MongoDB). For each
-- MongoDB index it creates a B-tree over `((_jsonb->'field'))`, which cannot answer `@>`, so
-- every pushed-down filter scanned the whole table. A GIN index over the same expressions with
-- the jsonb_path_ops operator class answers `@>`: this trigger adds one beside each B-tree
-- FerretDB creates (`..._idx` gets `..._gin`), so any client's createIndexes speeds up the
-- equality filters on its fields. A compound index gets one multi-column GIN index, which
-- serves any subset of its fields.
CREATE FUNCTION public.mongobench_gin_twin() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
  idx record;
  keys text;
BEGIN
  FOR idx IN
    SELECT c.oid, c.relname AS name, n.nspname AS schema, t.relname AS tbl, i.indnkeyatts
    FROM pg_event_trigger_ddl_commands() d
    JOIN pg_index i ON i.indexrelid = d.objid
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_am am ON am.oid = c.relam
    WHERE d.object_type = 'index'
      AND am.amname = 'btree'                      -- not our own GIN twins
      AND c.relname LIKE '%\_idx'                  -- FerretDB's index names end in _idx
      AND t.relname NOT LIKE '\_ferretdb\_%'       -- not FerretDB's metadata table
      AND 0 = ALL (i.indkey::int2[])               -- every key is an expression ...
      AND NOT EXISTS (SELECT FROM pg_attribute a   -- ... of type jsonb
                      WHERE a.attrelid = c.oid AND a.attnum > 0 AND a.atttypid <> 'jsonb'::regtype)
  LOOP
    SELECT string_agg(format('(%s) jsonb_path_ops', pg_get_indexdef(idx.oid, k, true)), ', ' ORDER BY k)
      INTO keys FROM generate_series(1, idx.indnkeyatts) k;
    BEGIN
      EXECUTE format('CREATE INDEX %I ON %I.%I USING gin (%s)',
                     left(idx.name, -4) || '_gin', idx.schema, idx.tbl, keys);
    EXCEPTION WHEN OTHERS THEN
      -- A missing twin only costs speed: never fail the client's createIndexes for it.
      RAISE WARNING 'no GIN twin for index %.%: %', idx.schema, idx.name, SQLERRM;
    END;
  END LOOP;
END $$;

-- dropIndexes drops FerretDB's B-tree; its twin goes with it. (Dropping a collection or a
-- database drops the table, which takes every index along.)
CREATE FUNCTION public.mongobench_gin_twin_drop() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
  o record;
BEGIN
  FOR o IN
    SELECT schema_name, object_name FROM pg_event_trigger_dropped_objects()
    WHERE object_type = 'index' AND object_name LIKE '%\_idx'
  LOOP
    EXECUTE format('DROP INDEX IF EXISTS %I.%I', o.schema_name, left(o.object_name, -4) || '_gin');
  END LOOP;
END $$;

CREATE EVENT TRIGGER mongobench_gin_twin ON ddl_command_end
  WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION public.mongobench_gin_twin();
CREATE EVENT TRIGGER mongobench_gin_twin_drop ON sql_drop
  WHEN TAG IN ('DROP INDEX') EXECUTE FUNCTION public.mongobench_gin_twin_drop();

-- The shared `mongo` server's database (created last, so that it copies the triggers).
CREATE DATABASE ferretdb OWNER ferretdb;
