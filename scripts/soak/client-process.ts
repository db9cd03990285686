// One soak client in its own process (clients.ts forks it for `--clients=N`): says it is ready, takes its plan from
// the parent, runs its share of the load and sends back what it measured, then exits.
import { runClient, toWire, type LoadPlan } from "./clients.js";

process.once("message", (plan: LoadPlan) => {
  void runClient(plan).then((result) => {
    process.send!(toWire(result), () => process.disconnect());
  });
});
process.send!({ ready: true });
