import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "scan", description: "(not built yet)" },
  run() {
    console.error("sluice scan: not built yet");
    process.exit(2);
  },
});
