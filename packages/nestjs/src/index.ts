/**
 * The NestJS module: the engine, workflows and generated clients through Nest's injector and lifecycle, and an exception filter.
 *
 * @module @fusee/nestjs
 */
export { FuseeModule } from "./fusee.module.js";
export { FUSEE_MODULE_OPTIONS } from "./fusee.constants.js";
export type { FuseeModuleAsyncOptions } from "./fusee.module-definition.js";
export type { ClientClass, FuseeModuleExtras, FuseeModuleOptions } from "./interfaces/fusee-module-options.interface.js";
export { FuseeExceptionFilter, type FuseeErrorBody } from "./filters/fusee-exception.filter.js";
export { httpStatusOf } from "./filters/http-status-of.js";
