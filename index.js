// Zapier's loader wants a CommonJS entry point at the top level; the app is compiled into dist/.
module.exports = require('./dist').default;
