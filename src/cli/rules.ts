import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "rules", description: "(not built yet)" },
  run() {
    console.error("sluice rules: not built yet");
    process.exit(2);
  },
});
