# audience in a container: the API on 0.0.0.0:8080, data on the /data volume. Build: docker build -t audience .
# Run: docker run -p 8080:8080 -v audience-data:/data audience   (the first start prints the keys once: docker logs)
# Node 22 (the newest the uWebSockets.js binaries support); `docker stop` sends SIGTERM, which stops it cleanly.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY .ci ./.ci
RUN npm ci --ignore-scripts
COPY engine ./engine
COPY server ./server
COPY cli ./cli
COPY bench ./bench
COPY test ./test
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production AUDIENCE_HOST=0.0.0.0 AUDIENCE_PORT=8080 AUDIENCE_DATA=/data
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir /data && chown node:node /data
VOLUME /data
EXPOSE 8080
USER node
ENTRYPOINT ["node", "--max-semi-space-size=32", "dist/cli/bin.js"]
CMD ["serve"]
