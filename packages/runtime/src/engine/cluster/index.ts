// The cluster mode of the PostgreSQL engine, loaded by Engine.open for Config.postgres(url, { cluster: true }).
export { type ClusterHost, ClusterNode, type ClusterOptions } from "./node.js";
