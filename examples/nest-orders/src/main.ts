import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { AppModule } from "./app.module.js";
import { AppSettings } from "./settings.js";

const app = await NestFactory.create(AppModule);
// SIGTERM and SIGINT close the application: the engine drains its running steps and shuts down.
app.enableShutdownHooks();
const settings = app.get(AppSettings);
await app.listen(settings.port, settings.host);
console.log(`orders listening on ${await app.getUrl()} (data in ${settings.dataDir})`);
