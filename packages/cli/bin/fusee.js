#!/usr/bin/env node
// Kept in the repository with its execute bit, so the command works before and after a build
// without npm having to mark build output executable.
import "../dist/src/main.js";
