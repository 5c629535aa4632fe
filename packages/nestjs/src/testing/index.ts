export { FuseeTestingModule, type FuseeTestingModuleOptions } from "./fusee-testing.module.js";
