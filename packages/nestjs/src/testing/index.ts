/**
 * `FuseeTestingModule`: the Nest module on a test engine, for `Test.createTestingModule`.
 *
 * @module @fusee/nestjs/testing
 */
export { FuseeTestingModule, type FuseeTestingModuleOptions } from "./fusee-testing.module.js";
