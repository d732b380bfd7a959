import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "logs", description: "(not built yet)" },
  run() {
    console.error("sluice logs: not built yet");
    process.exit(2);
  },
});
