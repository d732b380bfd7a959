import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "serve", description: "(not built yet)" },
  run() {
    console.error("sluice serve: not built yet");
    process.exit(2);
  },
});
