/** Preloaded before the test files (bunfig.toml): the run's temp files in a directory removed after the last test. */
import { afterAll } from "bun:test";
import { useRunTempDir } from "./helpers/run-temp.ts";

afterAll(useRunTempDir());
