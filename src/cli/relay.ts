import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "relay", description: "(not built yet)" },
  run() {
    console.error("sluice relay: not built yet");
    process.exit(2);
  },
});
