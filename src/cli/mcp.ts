import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "mcp", description: "(not built yet)" },
  run() {
    console.error("sluice mcp: not built yet");
    process.exit(2);
  },
});
