import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "engine", description: "(not built yet)" },
  run() {
    console.error("sluice engine: not built yet");
    process.exit(2);
  },
});
